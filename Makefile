# Shortcuts for those who have make; the commands themselves need only bash and python3.
.PHONY: test demo

test:
	bash tests/run.sh

demo:
	python3 -m venv .venv
	.venv/bin/pip install -q -e .
	.venv/bin/mle-gym demo

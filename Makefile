# `make test` works on a fresh Debian machine as root: it installs bubblewrap and Docker,
# starts dockerd, installs the package, builds the offline agent image, then runs pytest.
PYTHON ?= python3

.PHONY: setup test demo

setup:
	bash .ci/system-setup.sh
	$(PYTHON) -m pip install -q -e '.[ci]'
	$(PYTHON) -m mle_gym.cli build-image --offline
	for script in .ci/setup.d/*.sh; do if [ -e "$$script" ]; then bash "$$script" || exit 1; fi; done

test: setup
	$(PYTHON) -m pytest -q

demo:
	$(PYTHON) -m pip install -q -e .
	$(PYTHON) -m mle_gym.cli demo

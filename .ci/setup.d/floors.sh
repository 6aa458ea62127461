#!/usr/bin/env bash
# The oldest versions the competitions' extras allow, installed together beside MLE-bench's
# pins (pandas 2.2.2, numpy 1.26.4, scikit-learn 1.5.1), so that a floor the code has
# outgrown fails CI (tests/test_extras_floors.py prepares and grades one competition of each
# extra in this venv). The floors are read from setup.cfg's `images`, `archives` and
# `detection` extras, and pyarrow's from install_requires (the newest pyarrow needs numpy 2,
# which MLE-bench's pin rules out): each `name>=X` becomes `name==X`.
# Where: $MLE_GYM_FLOORS_VENV (default $MLE_GYM_HOME/venv-floors: .ci/cache-dirs.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/cache-dirs.sh

venv="$MLE_GYM_FLOORS_VENV"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
constraints="$venv/floors.txt"
python3 - > "$constraints" <<'PY'
import configparser
import re

extras = configparser.ConfigParser()
extras.read("setup.cfg")
lines = extras["options"]["install_requires"].split("\n")
lines = [line for line in lines if line.strip().startswith("pyarrow")]
for extra in ("images", "archives", "detection"):
    lines += extras["options.extras_require"][extra].split("\n")
for line in lines:
    if match := re.fullmatch(r"\s*([A-Za-z0-9_.-]+)>=([0-9.]+)\s*", line):
        print(f"{match[1]}=={match[2]}")
print("pandas==2.2.2\nnumpy==1.26.4\nscikit-learn==1.5.1")
PY
"$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$constraints" \
    -e '.[competitions]' pytest
"$venv/bin/python" -c "import mle_gym.grading; print('floors venv ready:', '$venv')"

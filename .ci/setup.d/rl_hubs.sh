#!/usr/bin/env bash
# The RL hubs whose pins conflict with the `ci` extra get venvs of their own, made with
# pyenv's 3.12 (or python3.12 on PATH), with mle_gym installed editable into each:
# - NeMo-Gym (`nemo-gym` extra): 0.4 needs Python >= 3.12 (0.5 and later >= 3.13.14) and pins
#   openai <= 2.7.2 and mcp < 2, against the aide extra's openai 2.54 and mini-swe-agent's
#   mcp 2. tests/test_integration_nemo_gym.py runs ng_run and ng_collect_rollouts there.
#   Where: $MLE_GYM_NEMO_GYM_VENV (default $MLE_GYM_HOME/venv-nemo-gym: .ci/cache-dirs.sh).
# - OpenEnv (`openenv` extra): pins mcp < 2 through fastmcp 3. tests/test_integration_openenv.py
#   serves mle_gym's OpenEnv environment and runs OpenEnv's client there.
#   Where: $MLE_GYM_OPENENV_VENV (default $MLE_GYM_HOME/venv-openenv: .ci/cache-dirs.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/cache-dirs.sh
source .ci/venv312.sh

nemo="$MLE_GYM_NEMO_GYM_VENV"
venv312 "$nemo" NeMo-Gym
# Python 3.12.1's own pip (23.2) does not match the extra's name `nemo-gym` with its metadata.
"$nemo/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$nemo/bin/python" -m pip install -q --disable-pip-version-check -e '.[nemo-gym]'
"$nemo/bin/python" -c "import nemo_gym, mle_gym.integrations.nemo_gym; print('NeMo-Gym venv ready:', '$nemo')"

openenv="$MLE_GYM_OPENENV_VENV"
venv312 "$openenv" OpenEnv
"$openenv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
"$openenv/bin/python" -m pip install -q --disable-pip-version-check -e '.[openenv]'
"$openenv/bin/python" -c "import openenv, mle_gym.integrations.openenv; print('OpenEnv venv ready:', '$openenv')"

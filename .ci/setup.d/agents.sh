#!/usr/bin/env bash
# The agent scaffolds' installs that an extra cannot express (the rest is in `.[ci]`):
# - AIDE: aideml 0.2.2 without its declared dependencies (PyTorch with CUDA and ~100
#   packages its agent loop never imports); what it does import is the `aide` extra.
# - OpenHands: its V1 SDK needs Python >= 3.12, so it gets a venv of its own, made with
#   pyenv's 3.12 (or python3.12 on PATH), with mle_gym and the `openhands` extra installed
#   editable into it. tests/test_openhands.py runs episodes with its interpreter.
#   Where: $MLE_GYM_OPENHANDS_VENV (default $MLE_GYM_HOME/venv-openhands: .ci/cache-dirs.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/cache-dirs.sh

python3 -m pip install -q --no-deps aideml==0.2.2

venv="$MLE_GYM_OPENHANDS_VENV"
source .ci/venv312.sh
venv312 "$venv" OpenHands
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e '.[openhands]'
LITELLM_LOCAL_MODEL_COST_MAP=True OPENHANDS_SUPPRESS_BANNER=1 "$venv/bin/python" -c "import openhands.sdk, openhands.tools, mle_gym; print('OpenHands venv ready:', '$venv')"

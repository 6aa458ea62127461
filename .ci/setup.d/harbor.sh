#!/usr/bin/env bash
# Harbor (the task format `mle-gym export harbor` writes) needs Python >= 3.12, so it gets a
# venv of its own, made with pyenv's 3.12 (or python3.12 on PATH): harbor pinned, and
# mle_gym installed editable (the tests' trials run mle_gym's Harbor environment provider,
# mle_gym.integrations.harbor, in Harbor's interpreter). Then the verifier's grader image is
# built on the offline agent image, so the tests only reuse it.
# Where: $MLE_GYM_HARBOR_VENV (default $MLE_GYM_HOME/venv-harbor: .ci/cache-dirs.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/cache-dirs.sh

venv="$MLE_GYM_HARBOR_VENV"
source .ci/venv312.sh
venv312 "$venv" Harbor
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e '.[harbor]'
"$venv/bin/python" -c "import harbor, mle_gym.integrations.harbor; print('Harbor venv ready:', '$venv')"

if docker info >/dev/null 2>&1; then
    python3 -c "
from mle_gym.export.grader_image import build_grader_image
from mle_gym.sandbox.image import OFFLINE_IMAGE, build_offline_image
build_offline_image(log=lambda line: None)
print('grader image:', build_grader_image(OFFLINE_IMAGE))"
fi

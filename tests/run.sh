#!/usr/bin/env bash
# The whole test suite on a fresh Debian/Ubuntu machine, run as root: installs the system
# pieces (bubblewrap, slirp4netns, libseccomp, a Docker engine), makes the virtual
# environment .venv (PEP 668 forbids installing into the system Python), installs the
# package with its test extras there, builds the offline agent image, runs the optional
# integrations' setup (.ci/setup.d), then pytest with the venv first on PATH.
# Arguments go to pytest. Needs only python3, python3-venv and git to begin with.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${VENV:-.venv}"
source .ci/cache-dirs.sh  # the integrations' venvs and Dolos: under $MLE_GYM_HOME
bash .ci/system-setup.sh
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
PATH="$(cd "$venv" && pwd)/bin:$PATH"
export PATH
python -m pip install -q --disable-pip-version-check -e '.[ci]'
python -m mle_gym.cli build-image --offline
for script in .ci/setup.d/*.sh; do
    if [ -e "$script" ]; then bash "$script"; fi
done
python -m pytest -q "$@"

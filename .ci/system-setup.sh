#!/usr/bin/env bash
# System pieces the tests need, installed on a fresh Debian machine (run as root):
# bubblewrap for the local sandbox, and a running Docker engine for the docker one.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v bwrap >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
fi
bash .ci/docker-up.sh

#!/usr/bin/env bash
# System pieces the tests need, installed on a fresh Debian machine (run as root):
# bubblewrap, libseccomp and slirp4netns for the local sandbox (iproute2's `ip` for the
# tests that read its routes), and a running Docker engine for the docker one (with
# gVisor's runsc registered as a runtime: .ci/docker-up.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v slirp4netns >/dev/null 2>&1 || missing+=(slirp4netns)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
ldconfig -p | grep -q 'libseccomp\.so\.2' || missing+=(libseccomp2)
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
bash .ci/docker-up.sh

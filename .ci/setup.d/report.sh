#!/usr/bin/env bash
# The HTML report's test loads the page in a real headless browser: Chromium from Debian's
# packages (matplotlib, which draws the figures, comes with the `report` extra).
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
chromium --version

#!/usr/bin/env bash
# The plagiarism audit (`mle-gym audit plagiarism`) runs Dolos, the similarity checker
# MLE-bench uses, under Node: Node and npm from Debian's packages when missing, then
# @dodona/dolos-lib (pinned) from the npm registry into $MLE_GYM_DOLOS_DIR (default
# $MLE_GYM_HOME/dolos: .ci/cache-dirs.sh). Its tree-sitter parsers compile on install (a
# few minutes).
set -euo pipefail
source "$(dirname "$0")/../cache-dirs.sh"

dir="$MLE_GYM_DOLOS_DIR"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
if [ ! -d "$dir/node_modules/@dodona/dolos-lib" ]; then
    npm install --prefix "$dir" --no-audit --no-fund @dodona/dolos-lib@3.5.1
fi
(cd "$dir" && node --input-type=module --eval 'import { Dolos } from "@dodona/dolos-lib"; new Dolos(); console.log("Dolos ready")')

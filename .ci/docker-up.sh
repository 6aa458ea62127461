#!/usr/bin/env bash
# Bring up a local Docker engine on a Debian bookworm machine (run as root).
#
# Why: the sandbox runs agent commands in containers, and neither CI nor a
# fresh dev machine has a running engine. No registry is reachable, so the
# engine comes from Debian's docker.io and images are built offline
# (mle_gym.sandbox.image.build_offline_image).
#
# Idempotent: installs only what is missing, starts dockerd only when
# `docker info` fails, and waits (bounded) until the engine answers.
#
# gVisor: Debian's runsc is registered as the runtime "runsc" in
# /etc/docker/daemon.json (other keys there are kept); a running engine that
# does not list it yet reloads its configuration (SIGHUP), without a restart.
# On bookworm it comes from bookworm-backports (20240729): bookworm's own
# (20221219) refuses the statx flags of bookworm's coreutils, so `ls` and
# `stat` fail with EINVAL inside. It is registered with --network=none: these
# releases take a network namespace whose /proc/sys/net/core/rmem_default
# exists (every one, on recent kernels) for the host's and refuse to start in
# it, and sandboxes have no network by default anyway.
#
# Tunables (environment):
#   DOCKERD_LOG             dockerd log file            (default /tmp/dockerd.log)
#   DOCKERD_WAIT_SECONDS    how long to wait for dockerd (default 60)
#   DOCKERD_STORAGE_DRIVER  force a storage driver; default: overlay2 when the
#                           kernel has overlayfs, else vfs (slow, disk-hungry)
set -euo pipefail

LOG="${DOCKERD_LOG:-/tmp/dockerd.log}"
WAIT="${DOCKERD_WAIT_SECONDS:-60}"

log() { echo "[docker-up] $*" >&2; }
give_up() {
    log "$1; last log lines:"
    tail -n 40 "$LOG" >&2 || true
    exit 1
}

if [ "$(id -u)" -ne 0 ]; then
    log "must run as root"
    exit 1
fi

# --- 1. packages -------------------------------------------------------------
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# runsc's release date, 0 when there is none (e.g. "runsc version 0.0~20240729.0")
runsc_date() { { runsc --version 2>/dev/null || true; } | grep -o '[0-9]\{8\}' | head -n 1 || echo 0; }
if [ "$(runsc_date)" -lt 20240729 ]; then
    export DEBIAN_FRONTEND=noninteractive
    suite=()
    if grep -q '^VERSION_CODENAME=bookworm' /etc/os-release; then
        backports=/etc/apt/sources.list.d/bookworm-backports.sources
        if [ ! -e "$backports" ]; then
            printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' \
                'Suites: bookworm-backports' 'Components: main' \
                'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' >"$backports"
        fi
        suite=(-t bookworm-backports)
    fi
    log "installing runsc (gVisor) ${suite[*]}"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${suite[@]}" runsc >/dev/null
fi

# --- 2. gVisor's runtime in the engine's configuration ---------------------------
CONFIG=/etc/docker/daemon.json
mkdir -p "$(dirname "$CONFIG")"
python3 - "$CONFIG" "$(command -v runsc)" <<'PY'
import json, sys
from pathlib import Path
config, runsc = Path(sys.argv[1]), sys.argv[2]
settings = json.loads(config.read_text() or "{}") if config.exists() else {}
wanted = {"path": runsc, "runtimeArgs": ["--network=none"]}
if settings.get("runtimes", {}).get("runsc") != wanted:
    settings.setdefault("runtimes", {})["runsc"] = wanted
    config.write_text(json.dumps(settings, indent=2) + "\n")
PY

has_runsc() { docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; }

# --- 3. already running? -------------------------------------------------------
if docker info >/dev/null 2>&1; then
    if ! has_runsc; then
        log "reloading the engine's configuration to register runsc"
        kill -HUP "$(pgrep -x -o dockerd)"
        deadline=$((SECONDS + WAIT))
        until has_runsc; do
            [ "$SECONDS" -lt "$deadline" ] || give_up "the engine did not list runsc within ${WAIT}s"
            sleep 1
        done
    fi
    log "engine already up: $(docker info --format '{{.ServerVersion}} {{.Driver}}')"
    exit 0
fi

# --- 4. choose options -----------------------------------------------------------
opts=()
driver="${DOCKERD_STORAGE_DRIVER:-}"
if [ -z "$driver" ]; then
    if grep -qw overlay /proc/filesystems || modprobe overlay >/dev/null 2>&1; then
        driver=overlay2
    else
        driver=vfs
    fi
fi
opts+=("--storage-driver=$driver")

# Containers run with network_mode=none, so bridge/NAT is optional. Keep it
# when the kernel lets iptables create the NAT chain; otherwise turn it off
# instead of letting dockerd die at start-up.
if iptables -t nat -L -n >/dev/null 2>&1; then
    :
else
    log "iptables NAT not usable here: starting dockerd with --iptables=false"
    opts+=(--iptables=false --ip-masq=false)
fi

# A dockerd that was killed leaves a pid file behind; if the process is gone,
# remove it so the new daemon starts cleanly.
for pidfile in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
    if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null; then
        rm -f "$pidfile"
    fi
done

# If a dockerd is already running (still starting up), just wait for it.
dockerd_pid=""
if ! pgrep -x dockerd >/dev/null 2>&1; then
    log "starting dockerd ${opts[*]} (log: $LOG)"
    nohup dockerd "${opts[@]}" >>"$LOG" 2>&1 </dev/null &
    dockerd_pid=$!
    disown || true
else
    log "dockerd process exists; waiting for it to answer"
fi

# --- 5. wait -----------------------------------------------------------------
deadline=$((SECONDS + WAIT))
until docker info >/dev/null 2>&1; do
    if [ -n "$dockerd_pid" ] && ! kill -0 "$dockerd_pid" 2>/dev/null; then
        give_up "dockerd exited during start-up"
    fi
    [ "$SECONDS" -lt "$deadline" ] || give_up "dockerd did not come up within ${WAIT}s"
    sleep 1
done
log "engine up: $(docker info --format '{{.ServerVersion}} {{.Driver}}')"

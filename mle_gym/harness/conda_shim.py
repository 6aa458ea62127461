"""What stands in for conda in a harness's sandbox, for agents written for MLE-bench's image.

Their start scripts begin with `eval "$(conda shell.bash hook)"; conda activate agent` and
some use `conda run -n agent ...`. The sandbox has one Python environment, already on PATH
(the sandbox's Python, plus what --harness-dir brings): `agent` (and `base`) name it, and
activating it changes only conda's own variables. Anything else conda does is refused with
a message. `envsubst` (gettext, which MLE-bench's image has) is given too, for sandboxes
without it; these come last on PATH, so a sandbox's own programs win.
"""

from __future__ import annotations

from pathlib import Path

CONDA = r"""#!/bin/bash
# mle_gym: the sandbox's one Python environment stands in for conda's env "agent".
_known() { [ "$1" = agent ] || [ "$1" = base ]; }
case "$1" in
  shell.bash|shell.posix|shell.zsh)
    cat <<'HOOK'
conda() {
  case "$1" in
    activate)
      if [ -n "$2" ] && [ "$2" != agent ] && [ "$2" != base ]; then
        echo "conda: no environment $2 here (mle_gym's sandbox has one: agent)" >&2; return 1
      fi
      export CONDA_DEFAULT_ENV="${2:-base}" CONDA_SHLVL=1 ;;
    deactivate) unset CONDA_DEFAULT_ENV; export CONDA_SHLVL=0 ;;
    *) command conda "$@" ;;
  esac
}
HOOK
    ;;
  run)
    shift
    while [ $# -gt 0 ]; do
      case "$1" in
        -n|--name) _known "$2" || { echo "conda: no environment $2 here" >&2; exit 1; }; shift 2 ;;
        --no-capture-output|--live-stream) shift ;;
        --) shift; break ;;
        -*) echo "conda run: option $1 is not offered in mle_gym's sandbox" >&2; exit 2 ;;
        *) break ;;
      esac
    done
    exec "$@" ;;
  activate|deactivate)
    echo "conda: run 'eval \"\$(conda shell.bash hook)\"' first" >&2; exit 1 ;;
  --version|-V) echo "conda (mle_gym stand-in)" ;;
  *) echo "conda $1: not offered in mle_gym's sandbox (one environment, agent, already active)" >&2
     exit 2 ;;
esac
"""

ENVSUBST = r"""#!/usr/bin/env python3
# mle_gym: $NAME and ${NAME} from the environment (unset: empty), as gettext's envsubst.
import os, re, sys
pattern = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
sys.stdout.write(pattern.sub(lambda m: os.environ.get(m[1] or m[2], ""), sys.stdin.read()))
"""


def write_tools(bin_dir: Path) -> None:
    """`conda` and `envsubst` in `bin_dir`, readable and runnable by the sandbox's user."""
    bin_dir.mkdir(mode=0o755, exist_ok=True)
    for name, text in (("conda", CONDA), ("envsubst", ENVSUBST)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)

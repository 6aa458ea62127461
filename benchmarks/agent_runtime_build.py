"""Cost of the agent's pinned runtime: build time and size of the image and of its file
system exported for the local sandbox.

    python benchmarks/agent_runtime_build.py

Builds into a fresh temporary $MLE_GYM_HOME (the wheels are downloaded from the package
registry, then installed with no index), rebuilding the runtime image on the agent image
present (the full one, else the offline one) and exporting it.

Measured 2026-11-29 on the project's 2-core test machine while other jobs loaded it (load
average about 13), on the offline image: image mle-gym-agent:runtime-<hash> 792 MiB in 250 s
(wheel download, install into the build context, one COPY), its file system exported for the
local sandbox 796 MiB in 113 s (an export of the same image took 40 s at load 13 and 141 s at
load 18: extraction is the cost, and it is paid once per lock).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from mle_gym.sandbox import agent_runtime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="agent image to build on (default: the one present)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="runtime-bench-") as home:
        built = agent_runtime.build_runtime(
            args.base, Path(home), force=True, log=lambda _line: None
        )
    for item in built:
        print(f"{item.path}: {item.seconds:.1f} s, {item.size_bytes / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()

"""Cost of the agent's pinned runtime: build time and size of the venv and the image.

    python benchmarks/agent_runtime_build.py [--docker]

Builds into a fresh temporary $MLE_GYM_HOME (the wheels are downloaded from the package
registry, then installed with no index) and, with --docker, rebuilds the runtime image.

Measured 2026-11-26 on the project's 2-core test machine (shared with other jobs):
wheels 83 MiB (download ~3 s from a local mirror); venv 351 MiB in 27 s; image
mle-gym-agent:runtime-<hash> 792 MiB (831 MB: the 463 MB offline image plus a 368 MB
layer) in 87 s (installing into the build context, sending it to the engine, one COPY).
The same fixed HistGradientBoosting script on spaceship-titanic then scored 0.80115 on both
backends (local: Python 3.11.7; docker: Debian's 3.11.2; both numpy 2.2.6, pandas 2.2.3,
scikit-learn 1.6.1), against 0.7977 on the host's own libraries (scikit-learn 1.9.1,
pandas 3.1.1) and 0.80115 on the offline image's Debian ones (1.2.1, 1.5.3).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from mle_gym.sandbox import agent_runtime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docker", action="store_true", help="also rebuild the image")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="runtime-bench-") as home:
        built = [agent_runtime.build_venv(Path(home), log=lambda _line: None)]
        if args.docker:
            built.append(
                agent_runtime.build_image(home=Path(home), force=True, log=lambda _line: None)
            )
    for item in built:
        print(f"{item.path}: {item.seconds:.1f} s, {item.size_bytes / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()

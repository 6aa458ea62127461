"""One lock for every fork mle_gym makes, so that no two of its threads fork at once.

filelock >= 4, which many ML libraries import (Hugging Face's, Ray's, NeMo-Gym's), installs
an audit hook that makes `os.fork` and `os.forkpty` raise RuntimeError in a thread while
another thread is between its own fork's before and after hooks. A trainer that grades
(`grading.bounded` forks a grader) from several threads at once would then lose steps at
random; taking this lock around each of those forks keeps them apart. (Local sandboxes
start their shells without a fork of this process: sandbox/pty_spawn.py.) A leaf module.
"""

from __future__ import annotations

import threading

FORK_LOCK = threading.Lock()

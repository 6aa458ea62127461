"""Lift the process's soft limit on open files to its hard limit.

Each sandbox holds several descriptors (pty, output pipe, cgroup and namespace handles), so
a trainer holding hundreds of environments in one process passes the common soft limit of
1024 long before memory runs short. The hard limit is the operator's real ceiling; the soft
one is only a default, which any process may raise up to it. Sandboxes raise it when the
first one is made, not on import: importing a package changes no process-wide setting.
"""

from __future__ import annotations

import logging
import resource
from functools import cache

log = logging.getLogger(__name__)


@cache
def raise_open_files_limit() -> None:
    """Set RLIMIT_NOFILE's soft value to its hard value where the soft one is lower; once
    per process (`make_sandbox` calls it for every sandbox)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft >= hard:
        return
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:  # e.g. a hard limit above the kernel's nr_open
        log.debug("could not raise the open-files limit from %s: %s", soft, exc)

"""Placing large raw files in public/ without copying their bytes.

Several competitions ship tens to hundreds of gigabytes of per-sample files that MLE-bench
copies unchanged into its public split. A hard link gives the same bytes at no cost in disk
or time; where the file system refuses one (another device, no permission), the file is
copied instead, so the result is the same either way.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

#: Errors of os.link that mean "links are not possible here", not "something is wrong".
_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK, errno.ENOTSUP}


def link_or_copy(src: str | os.PathLike, dst: str | os.PathLike) -> str:
    """Hard-link `src` at `dst`, or copy it when a link cannot be made; returns `dst`.

    The signature fits `shutil.copytree(copy_function=...)`.
    """
    try:
        os.link(src, dst)
    except OSError as exc:
        if exc.errno not in _NO_LINK:
            raise
        shutil.copy2(src, dst)
    return str(dst)


def place_file(src: Path, dst: Path) -> None:
    """`src` at `dst` by `link_or_copy`, creating `dst`'s folder when needed."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    link_or_copy(src, dst)


def place_tree(src: Path, dst: Path) -> None:
    """A folder tree, every file placed by `link_or_copy` (`dst` may already exist)."""
    shutil.copytree(src, dst, copy_function=link_or_copy, dirs_exist_ok=True)

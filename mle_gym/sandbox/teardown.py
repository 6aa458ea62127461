"""Teardown that cannot fail: removing a tree an agent shaped, and steps that log instead
of raising.

An agent shapes the trees the host removes. `shutil.rmtree` recurses once per level (a
tree 1,500 levels deep raises RecursionError), needs paths that fit PATH_MAX, and gives up
on a directory without read or search permission (`chmod 000`), so the tree would stay
behind and break whatever removes it next. `remove_tree` walks with one directory
descriptor at a time and a stack of names, never follows a symlink, gives each directory
it enters u+rwx, and reports what it could not remove instead of raising.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_HANDLE = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OWNER_RWX = stat.S_IRWXU


def attempt(what: str, action: Callable[[], object]) -> bool:
    """Run one teardown step; an exception is logged with `what`, never raised."""
    try:
        action()
        return True
    except Exception as exc:
        log.warning("mle_gym: %s failed: %s: %s", what, type(exc).__name__, exc)
        return False


@dataclass
class _Level:
    """A directory being emptied: its name in its parent, its identity, and the
    subdirectories still to empty."""

    name: str
    identity: tuple[int, int]
    subdirectories: list[str] = field(default_factory=list)


def remove_tree(path: Path, *, last: str | None = None) -> bool:
    """Remove `path` and everything under it; True when nothing is left.

    `last`: an entry directly under `path` removed only after everything else, so that it
    stays if anything else does (a scratch folder's owner file). Failures are logged.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError as exc:
        log.warning("mle_gym: could not remove %s: %s", path, exc)
        return False
    try:
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(path)
            return True
        parent = os.open(path.parent, _HANDLE)
    except OSError as exc:
        log.warning("mle_gym: could not remove %s: %s", path, exc)
        return False
    try:
        failures = _remove_directory(parent, path.name, last)
    except Exception as exc:  # never raise from teardown
        failures = [f"{type(exc).__name__}: {exc}"]
    finally:
        os.close(parent)
    if failures:
        log.warning(
            "mle_gym: %d entr%s under %s could not be removed (first: %s)",
            len(failures),
            "y" if len(failures) == 1 else "ies",
            path,
            failures[0],
        )
    return not failures


def _remove_directory(parent: int, name: str, last: str | None) -> list[str]:
    """Empty and remove the directory `name` under the descriptor `parent`, depth first
    with an explicit stack; returns what could not be removed."""
    failures: list[str] = []
    try:
        current, identity = _enter(parent, name)
    except FileNotFoundError:  # gone already: nothing left to remove
        return []
    except OSError as exc:
        return [f"{name}: {exc.strerror}"]
    stack = [_Level(name, identity, _empty_files(current, failures, skip=last))]
    try:
        while stack:
            level = stack[-1]
            if level.subdirectories:
                child = level.subdirectories.pop()
                try:
                    below, identity = _enter(current, child)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    failures.append(f"{child}: {exc.strerror}")
                    continue
                os.close(current)
                current = below
                stack.append(_Level(child, identity, _empty_files(current, failures)))
                continue
            stack.pop()
            if not stack:  # the top: its `last` entry, then the directory itself
                if last is not None and not failures:
                    _unlink(current, last, failures)
                os.close(current)
                current = -1
                if not failures:
                    _rmdir(parent, name, failures)
                break
            above = os.open("..", _DIR, dir_fd=current)
            if _identity(above) != stack[-1].identity:  # moved while being removed
                os.close(above)
                failures.append(f"{level.name}: its parent changed during removal")
                break
            os.close(current)
            current = above
            _rmdir(current, level.name, failures)
    finally:
        if current >= 0:
            os.close(current)
    return failures


def _enter(parent: int, name: str) -> tuple[int, tuple[int, int]]:
    """A read descriptor of the directory `name` (never a symlink's target), made
    readable, searchable and writable for its owner first when it was not."""
    handle = os.open(name, _HANDLE, dir_fd=parent)
    try:
        mode = os.fstat(handle).st_mode
        if mode & _OWNER_RWX != _OWNER_RWX:
            # fchmod refuses O_PATH descriptors; the /proc link reaches the same inode
            os.chmod(f"/proc/self/fd/{handle}", stat.S_IMODE(mode) | _OWNER_RWX)
        fd = os.open(f"/proc/self/fd/{handle}", _DIR & ~os.O_NOFOLLOW)
    finally:
        os.close(handle)
    return fd, _identity(fd)


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _empty_files(directory: int, failures: list[str], skip: str | None = None) -> list[str]:
    """Unlink every non-directory entry; return the subdirectories' names."""
    subdirectories = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name == skip:
                    continue
                try:
                    is_directory = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_directory = False
                if is_directory:
                    subdirectories.append(entry.name)
                else:
                    _unlink(directory, entry.name, failures)
    except OSError as exc:
        failures.append(f"listing: {exc.strerror}")
    return subdirectories


def _unlink(directory: int, name: str, failures: list[str]) -> None:
    try:
        os.unlink(name, dir_fd=directory)
    except FileNotFoundError:
        pass
    except OSError as exc:
        failures.append(f"{name}: {exc.strerror}")


def _rmdir(directory: int, name: str, failures: list[str]) -> None:
    try:
        os.rmdir(name, dir_fd=directory)
    except FileNotFoundError:
        pass
    except OSError as exc:
        failures.append(f"{name}: {exc.strerror}")

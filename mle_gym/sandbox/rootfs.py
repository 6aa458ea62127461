"""Files of a running local sandbox, read and written from the host without its shell.

The agent's shell is the agent's: it can shadow `stat`, `base64` or `printf` with
functions, forge output markers or fill the terminal. So the tools and the grader never
move files through it. They reach the sandbox's file system through the kernel's view of
its root, `/proc/<pid>/root`, and resolve every path with openat2's RESOLVE_IN_ROOT: a
symlink (absolute or `..`) is followed as it would be inside the sandbox and can never
lead out of it. When the host runs as root, the operations run on a worker thread that
has taken the agent's file-system uid and gid and no supplementary groups (all three are
per-thread in Linux; a uid change also drops the thread's file capabilities), so file
permissions are exactly the agent's while the rest of the process stays as it was.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import posixpath
import stat
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from mle_gym.sandbox.base import GONE, LATE, FileInfo, SandboxFileError
from mle_gym.sandbox.tree import TreeEntry

T = TypeVar("T")

_SYS_OPENAT2 = 437  # the same number on every architecture (added after the unification)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE_IN_ROOT = 0x10
#: Files whose sources are open at once while a tree is written.
_PUT_BATCH = 256
_SETGROUPS = {"x86_64": 116, "aarch64": 159}
_CHUNK = 1 << 20
#: Most directory entries a listing walks (files, folders, links): a tree of a million empty
#: folders ends the walk as a tree of too many files does.
MAX_WALKED = 200_000


class _OpenHow(ctypes.Structure):
    _fields_ = (("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64))


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _openat2(
    root_fd: int, relative: str, flags: int, mode: int = 0,
    resolve: int = _RESOLVE_IN_ROOT | _RESOLVE_NO_MAGICLINKS,
) -> int:  # fmt: skip
    how = _OpenHow(flags | os.O_CLOEXEC, mode, resolve)
    fd = _libc.syscall(
        ctypes.c_long(_SYS_OPENAT2),
        ctypes.c_int(root_fd),
        ctypes.c_char_p(relative.encode("utf-8", errors="surrogateescape") or b"."),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), relative)
    return int(fd)


def _relative(path: str) -> str:
    if not path.startswith("/"):
        raise SandboxFileError(f"path must be absolute (start with /), got {path!r}")
    return posixpath.normpath(path).lstrip("/")


def _reason(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{exc.strerror} (the sandbox's writable space is full)"
    return exc.strerror or str(exc)


@dataclass
class RootFiles:
    """File operations inside the sandbox whose processes include `pid()`.

    `uid`/`gid`: the agent's credentials on the host, when they differ from this
    process's (the host runs as root); None when the agent already runs as this user.
    """

    pid: Callable[[], int]
    uid: int | None = None
    gid: int | None = None
    _worker: ThreadPoolExecutor | None = field(default=None, init=False, repr=False)

    # -- the operations ------------------------------------------------------------------------
    def stat(self, path: str) -> FileInfo | None:
        relative = _relative(path)
        return self._as_agent(lambda root: _stat(root, relative))

    def read(self, path: str, max_bytes: int) -> bytes:
        relative = _relative(path)
        return self._as_agent(lambda root: _read(root, relative, path, max_bytes))

    def write(self, path: str, data: bytes) -> None:
        relative = _relative(path)
        self._as_agent(lambda root: _write(root, relative, path, data))

    def copy_out(self, path: str, dest: Path, max_bytes: int) -> bool:
        relative = _relative(path)
        with open(dest, "wb") as out:
            fd = out.fileno()
            return self._as_agent(lambda root: _copy(root, relative, path, fd, max_bytes))

    def list(self, path: str, max_files: int) -> tuple[list[tuple[str, int]], bool]:
        relative = _relative(path)
        return self._as_agent(lambda root: _list(root, relative, max_files))

    def copy_many(
        self, path: str, names: list[str], dest: Path, max_file_bytes: int, max_bytes: int,
        deadline: float,
    ) -> dict[str, str]:  # fmt: skip
        """`Sandbox.copy_files` in batches: the host opens each batch's copies (the agent
        cannot write the host's folder), one hand-over to the agent's thread copies them all
        (one each costs a thread round trip per file)."""

        def open_copy(name: str) -> int:
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            return os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)

        def copied(name: str, fd: int, outcome: int | str) -> None:
            if isinstance(outcome, str):
                (dest / name).unlink(missing_ok=True)

        bounds = (max_file_bytes, max_bytes, deadline)
        return self._copy_batches(path, names, open_copy, copied, bounds)

    def read_many(
        self, path: str, names: list[str], max_file_bytes: int, max_bytes: int,
        deadline: float,
    ) -> tuple[dict[str, bytes], dict[str, str]]:  # fmt: skip
        """`copy_many` into memory (`Sandbox.read_files`): each copy goes into a memory file
        of the host's (memfd), read back, so no file is written on disk."""
        contents: dict[str, bytes] = {}

        def open_copy(name: str) -> int:
            return os.memfd_create("mle-gym-copy", os.MFD_CLOEXEC)

        def copied(name: str, fd: int, outcome: int | str) -> None:
            if not isinstance(outcome, str):
                contents[name] = _read_all(fd, outcome)

        bounds = (max_file_bytes, max_bytes, deadline)
        return contents, self._copy_batches(path, names, open_copy, copied, bounds)

    def _copy_batches(
        self,
        path: str,
        names: list[str],
        open_copy: Callable[[str], int],
        copied: Callable[[str, int, int | str], None],
        bounds: tuple[int, int, float],
    ) -> dict[str, str]:
        """Each batch's copies opened on the host (`open_copy`), filled in one hand-over to
        the agent's thread, then handed to `copied` with their size or why they were not
        copied; why each name not copied was not."""
        relative = _relative(path)
        missed: dict[str, str] = {}
        max_file_bytes, left, deadline = bounds
        for start in range(0, len(names), _PUT_BATCH):
            batch = names[start : start + _PUT_BATCH]
            outs: dict[str, int] = {}
            try:
                for name in batch:
                    outs[name] = open_copy(name)
                these = (max_file_bytes, left, deadline)
                done = self._as_agent(
                    lambda root, o=outs, b=these: _copy_batch(root, relative, o, b)
                )
                for name in batch:
                    outcome = done[name]
                    copied(name, outs[name], outcome)
                    if isinstance(outcome, str):
                        missed[name] = outcome
                    else:
                        left -= outcome
            finally:
                for fd in outs.values():
                    os.close(fd)
        return missed

    def tree(self, path: str, max_entries: int) -> tuple[list[TreeEntry], bool]:
        relative = _relative(path)
        return self._as_agent(lambda root: _tree(root, relative, max_entries))

    def put(
        self, path: str, entries: list[TreeEntry], source: Callable[[TreeEntry], Path]
    ) -> dict[str, str]:
        """Write `entries` below the directory `path` as the agent: folders, then files (each
        source opened here, with this process's rights, in batches), then symlinks, then the
        folders' modes; why each entry that was not written was not."""
        relative = _relative(path)
        missed: dict[str, str] = {}
        ordered = sorted(entries, key=lambda e: (("dir", "file", "symlink").index(e.kind), e.path))
        for batch in _batches(ordered):
            sources = {}
            try:
                for entry in batch:
                    if entry.kind == "file":
                        sources[entry.path] = os.open(
                            source(entry), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
                        )
                missed.update(
                    self._as_agent(lambda root, b=batch, s=sources: _put(root, relative, b, s))
                )
            finally:
                for fd in sources.values():
                    os.close(fd)
        folders = sorted((e for e in entries if e.kind == "dir"), key=lambda e: -e.path.count("/"))
        missed.update(self._as_agent(lambda root: _set_modes(root, relative, folders)))
        return missed

    # -- running with the agent's credentials ----------------------------------------------------
    def _as_agent(self, operation: Callable[[int], T]) -> T:
        pid = self.pid()

        def run() -> T:
            root = _open_root(pid)
            try:
                return operation(root)
            finally:
                os.close(root)

        if self.uid is None or self.gid is None:
            return run()
        if self._worker is None:
            self._worker = ThreadPoolExecutor(
                max_workers=1,
                thread_name_prefix="mle-gym-files",
                initializer=_take_file_credentials,
                initargs=(self.uid, self.gid),
            )
        return self._worker.submit(run).result()

    def close(self) -> None:
        """End the worker thread (a new one starts on the next operation)."""
        if self._worker is not None:
            self._worker.shutdown(wait=False)
            self._worker = None


def _take_file_credentials(uid: int, gid: int) -> None:
    """This thread only: the agent's file-system ids and no supplementary groups. glibc's
    setgroups() would change every thread, so the system call is made directly."""
    numbers = _SETGROUPS.get(platform.machine())
    if numbers is None:
        raise SandboxFileError(f"no per-thread setgroups for {platform.machine()}")
    if _libc.syscall(ctypes.c_long(numbers), 0, None) != 0:
        raise SandboxFileError("could not drop supplementary groups for file access")
    _libc.setfsgid(gid)
    _libc.setfsuid(uid)
    if _libc.setfsuid(-1) != uid or _libc.setfsgid(-1) != gid:  # -1: read back, no change
        raise SandboxFileError("could not take the agent's file-system ids")


def _open_root(pid: int) -> int:
    try:
        return os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise SandboxFileError(f"the sandbox is not running ({_reason(exc)})") from None


# -- the operations, given the sandbox's root directory -----------------------------------------
class _Missing(SandboxFileError):
    """Nothing is at the path (or a directory above it is missing)."""


def _open_regular(root: int, relative: str, shown: str, flags: int = os.O_RDONLY) -> int:
    """A descriptor of the regular file at `relative`, opened with `flags`.

    The path is resolved once, to an O_PATH descriptor (which opens nothing: no device
    driver, no FIFO); its file is checked, and the descriptor returned is reopened from that
    one through /proc/self/fd, i.e. the same inode whatever the path names by then. So a
    symlink the agent swaps in after the check is never followed, and a FIFO, device or
    socket is never opened for reading or writing (that could block, or reach the host's
    own terminal through /dev/tty).
    """
    try:
        handle = _openat2(root, relative, os.O_PATH)
    except FileNotFoundError:
        raise _Missing(f"{shown} does not exist") from None
    except OSError as exc:
        raise SandboxFileError(f"{shown}: {_reason(exc)}") from None
    try:
        mode = os.fstat(handle).st_mode
        if stat.S_ISDIR(mode):
            raise SandboxFileError(f"{shown} is a directory")
        if not stat.S_ISREG(mode):
            raise SandboxFileError(f"{shown} is not a regular file")
        try:
            return os.open(f"/proc/self/fd/{handle}", flags | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as exc:
            raise SandboxFileError(f"{shown}: {_reason(exc)}") from None
    finally:
        os.close(handle)


def _stat(root: int, relative: str) -> FileInfo | None:
    try:
        handle = _openat2(root, relative, os.O_PATH)
    except OSError:
        return None
    try:
        info = os.fstat(handle)
    finally:
        os.close(handle)
    kind = (
        "dir" if stat.S_ISDIR(info.st_mode) else "file" if stat.S_ISREG(info.st_mode) else "other"
    )
    stamp = f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
    return FileInfo(kind=kind, size=info.st_size, stamp=stamp)


def _list(root: int, relative: str, max_files: int) -> tuple[list[tuple[str, int]], bool]:
    """Regular files under the directory `relative`, walked by `os.fwalk` from a descriptor
    resolved inside the sandbox: it opens each directory relative to its parent's descriptor
    and never follows a link, so a directory swapped for a link mid-walk leads nowhere; a
    directory on another device is not entered, one the agent cannot read is left out."""
    try:
        top = _openat2(root, relative, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return [], False
    found: list[tuple[str, int]] = []
    walked = 0
    try:
        device = os.fstat(top).st_dev
        for folder, dirs, names, folder_fd in os.fwalk(".", dir_fd=top):
            walked += len(dirs) + len(names)
            if walked > MAX_WALKED:
                return sorted(found)[:max_files], True
            dirs[:] = [d for d in dirs if _device(d, folder_fd) == device]
            for name in names:
                try:
                    info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_dev == device:
                    found.append((posixpath.normpath(posixpath.join(folder, name)), info.st_size))
        return sorted(found)[:max_files], len(found) > max_files
    finally:
        os.close(top)


def _device(name: str, folder_fd: int) -> int | None:
    try:
        return os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_dev
    except OSError:
        return None


def _read(root: int, relative: str, shown: str, max_bytes: int) -> bytes:
    fd = _open_regular(root, relative, shown)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise SandboxFileError(f"{shown} is {size:,} bytes, over the {max_bytes:,}-byte limit")
        chunks, total = [], 0
        while chunk := os.read(fd, min(_CHUNK, max_bytes + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # it grew while being read
                raise SandboxFileError(f"{shown} is over the {max_bytes:,}-byte limit")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _copy(root: int, relative: str, shown: str, dest_fd: int, max_bytes: int) -> bool:
    try:
        fd = _open_regular(root, relative, shown)
    except SandboxFileError:
        if _stat(root, relative) is None:
            return False
        raise
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise SandboxFileError(f"{shown} is {size:,} bytes, over the {max_bytes:,}-byte limit")
        total = 0
        while chunk := os.read(fd, min(_CHUNK, max_bytes + 1 - total)):
            total += len(chunk)
            if total > max_bytes:
                raise SandboxFileError(f"{shown} is over the {max_bytes:,}-byte limit")
            view = memoryview(chunk)
            while view:
                view = view[os.write(dest_fd, view) :]
        return True
    finally:
        os.close(fd)


def _parent_dir(root: int, relative: str, shown: str) -> int:
    """An O_PATH descriptor of the file's directory, creating missing directories."""
    parent = posixpath.dirname(relative)
    try:
        return _openat2(root, parent, os.O_PATH | os.O_DIRECTORY)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise SandboxFileError(f"could not write {shown}: {_reason(exc)}") from None
    current = os.dup(root)
    try:
        for name in [part for part in parent.split("/") if part]:
            try:
                os.mkdir(name, 0o755, dir_fd=current)
            except FileExistsError:
                pass
            following = _openat2(current, name, os.O_PATH | os.O_DIRECTORY)
            os.close(current)
            current = following
        return current
    except OSError as exc:
        os.close(current)
        raise SandboxFileError(f"could not write {shown}: {_reason(exc)}") from None


def _write(root: int, relative: str, shown: str, data: bytes) -> None:
    if not relative or relative == ".":
        raise SandboxFileError(f"could not write {shown}: is a directory")
    try:
        fd = _open_regular(root, relative, shown, os.O_WRONLY | os.O_TRUNC)
    except _Missing:
        fd = _create(root, relative, shown)
    except SandboxFileError as exc:
        raise SandboxFileError(f"could not write: {exc}") from None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        raise SandboxFileError(f"could not write {shown}: {_reason(exc)}") from None
    finally:
        os.close(fd)


def _create(root: int, relative: str, shown: str) -> int:
    """A new regular file: O_EXCL and O_NOFOLLOW fail on anything already at the name,
    a symlink included, so a name the agent fills in meanwhile is never followed."""
    parent = _parent_dir(root, relative, shown)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        return os.open(posixpath.basename(relative), flags, 0o644, dir_fd=parent)
    except OSError as exc:
        raise SandboxFileError(f"could not write {shown}: {_reason(exc)}") from None
    finally:
        os.close(parent)


# -- whole trees -----------------------------------------------------------------------------
def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "symlink" if stat.S_ISLNK(mode) else "other"


def _tree(root: int, relative: str, max_entries: int) -> tuple[list[TreeEntry], bool]:
    """Every entry under the directory `relative` (files, folders, symlinks as their text,
    and others), walked like `_list`: no link followed, no other mount entered."""
    try:
        top = _openat2(root, relative, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return [], False
    found: list[TreeEntry] = []
    try:
        device = os.fstat(top).st_dev
        for folder, dirs, names, folder_fd in os.fwalk(".", dir_fd=top):
            entered = []
            for name in [*dirs, *names]:
                try:
                    info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
                    kind = _kind(info.st_mode)
                    target = os.readlink(name, dir_fd=folder_fd) if kind == "symlink" else None
                except OSError:
                    continue
                if info.st_dev != device:
                    continue  # another mount (its mount point included)
                path = posixpath.normpath(posixpath.join(folder, name))
                size = info.st_size if kind == "file" else 0
                found.append(TreeEntry(path, kind, stat.S_IMODE(info.st_mode), size, target))
                if len(found) > max_entries:
                    return sorted(found, key=lambda e: e.path)[:max_entries], True
                if kind == "dir":
                    entered.append(name)
            dirs[:] = [d for d in dirs if d in entered]
        return sorted(found, key=lambda e: e.path), False
    finally:
        os.close(top)


def _copy_batch(
    root: int, relative: str, outs: dict[str, int], bounds: tuple[int, int, float]
) -> dict[str, int | str]:
    """Each file named in `outs` (below `relative`) copied into its descriptor: its bytes,
    or why it was not copied."""
    max_file_bytes, left, deadline = bounds
    done: dict[str, int | str] = {}
    for name, fd in outs.items():
        shown = posixpath.join("/", relative, name)
        if time.monotonic() > deadline:
            done[name] = LATE
            continue
        try:
            path = posixpath.join(relative, name)
            if not _copy(root, path, shown, fd, min(max_file_bytes, left)):
                done[name] = GONE
                continue
        except (SandboxFileError, UnicodeError) as exc:
            done[name] = str(exc)
            continue
        size = os.fstat(fd).st_size
        done[name] = size
        left -= size
    return done


def _read_all(fd: int, size: int) -> bytes:
    """The first `size` bytes of the file `fd` (a copy just written), from its start."""
    parts, offset = [], 0
    while offset < size and (chunk := os.pread(fd, size - offset, offset)):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def _batches(entries: list[TreeEntry]) -> Iterator[list[TreeEntry]]:
    batch: list[TreeEntry] = []
    for entry in entries:
        batch.append(entry)
        if len(batch) >= _PUT_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


_BENEATH = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS


def _put(
    root: int, relative: str, entries: list[TreeEntry], sources: dict[str, int]
) -> dict[str, str]:
    """Create each entry below `relative`; every parent is resolved beneath it with no
    symlink on the way, and every name is created new (O_EXCL, O_NOFOLLOW): nothing the
    agent or a symlink put there is ever written through."""
    missed: dict[str, str] = {}
    top = _openat2(root, relative, os.O_PATH | os.O_DIRECTORY)
    try:
        for entry in entries:
            parent_path, name = posixpath.split(entry.path)
            try:
                parent = _openat2(top, parent_path or ".", os.O_PATH | os.O_DIRECTORY, 0, _BENEATH)
            except OSError as exc:
                missed[entry.path] = f"its folder could not be opened: {_reason(exc)}"
                continue
            try:
                if entry.kind == "dir":
                    _make_dir(name, parent)
                elif entry.kind == "symlink":
                    os.symlink(entry.target or "", name, dir_fd=parent)
                else:
                    _make_file(name, parent, sources[entry.path], entry.mode)
            except OSError as exc:
                missed[entry.path] = _reason(exc)
            finally:
                os.close(parent)
    finally:
        os.close(top)
    return missed


def _make_dir(name: str, parent: int) -> None:
    try:
        os.mkdir(name, 0o700, dir_fd=parent)
    except FileExistsError:
        if not stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise


def _make_file(name: str, parent: int, source: int, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o600, dir_fd=parent)
    try:
        os.lseek(source, 0, os.SEEK_SET)
        while os.sendfile(fd, source, None, _CHUNK * 16):
            pass
        os.fchmod(fd, mode & 0o777)
    finally:
        os.close(fd)


def _set_modes(root: int, relative: str, folders: list[TreeEntry]) -> dict[str, str]:
    """Folders get their modes last (deepest first), so a read-only one was writable while
    it was filled; each is opened beneath `relative` with no symlink on the way."""
    missed: dict[str, str] = {}
    top = _openat2(root, relative, os.O_PATH | os.O_DIRECTORY)
    try:
        for entry in folders:
            try:
                fd = _openat2(top, entry.path, os.O_RDONLY | os.O_DIRECTORY, 0, _BENEATH)
            except OSError as exc:
                missed[entry.path] = _reason(exc)
                continue
            try:
                os.fchmod(fd, entry.mode & 0o777)
            except OSError as exc:  # a folder the agent does not own (a mount point of the
                missed[entry.path] = _reason(exc)  # sandbox's) keeps the mode it has
            finally:
                os.close(fd)
    finally:
        os.close(top)
    return missed

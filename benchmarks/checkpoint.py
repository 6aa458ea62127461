"""What a checkpoint of a sandbox's workspace costs, beside `tar` of the same tree in the
same run: capture time, a second capture of the unchanged tree (every content already in
the store), restore time into a fresh sandbox, and the bytes stored. The captures are also
timed as they were before files were read into memory (each file written to a scratch file
on the host, then moved into the store), in the same run.

    python benchmarks/checkpoint.py [--backend local|docker|both] [--scale 1.0] [--only "1 GB"]

Workspaces: 10 MB (ten 1 MB random files), 1 GB (four 256 MB random files) and 100,000
small files in 100 folders; `--scale` shrinks the byte sizes and the file count (for a
loaded machine). The baseline runs the image's own `tar` inside the sandbox on the same
/home/code: `tar -cf` into /tmp, then `tar -xf` into a fresh folder; it moves nothing out
of the sandbox, so it is a lower bound for a copy that crosses to the host.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from mle_gym.checkpoints.store import CheckpointStore
from mle_gym.checkpoints.workspace import capture, restore
from mle_gym.sandbox.base import Sandbox, SandboxSpec
from mle_gym.sandbox.factory import make_sandbox

MB = 1_000_000


def workspaces(scale: float) -> dict[str, str]:
    small, big, count = int(MB * scale), int(256 * MB * scale), int(100_000 * scale)
    return {
        "10 MB": f"for i in $(seq 1 10); do head -c {small} /dev/urandom > f$i; done",
        "1 GB": f"for i in 1 2 3 4; do head -c {big} /dev/urandom > f$i; done",
        f"{count:,} files": (
            "python3 -c 'import os\n"
            f"for i in range({count}):\n"
            '    d = f"d{i % 100}"\n'
            "    os.makedirs(d, exist_ok=True)\n"
            '    open(f"{d}/{i}.txt", "w").write(f"line {i}\\n")\''
        ),
    }


@contextlib.contextmanager
def started(backend: str, public: Path) -> Iterator[Sandbox]:
    options = {"runtime": "host"} if backend == "local" else {}
    sandbox = make_sandbox(backend, **options)
    try:
        sandbox.start(SandboxSpec(public_dir=public))
        yield sandbox
    finally:
        sandbox.stop()


def timed(sandbox: Sandbox, command: str) -> float:
    start = time.perf_counter()
    result = sandbox.run(command, 3600, max_output_chars=2000)
    if result.exit_code != 0:
        raise RuntimeError(f"{command[:60]}: {result.output}")
    return time.perf_counter() - start


def stored_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def bench(backend: str, scale: float, scratch: Path, only: str | None) -> None:
    print(f"{backend}:")
    public = scratch / "public"
    public.mkdir(exist_ok=True)
    (public / "train.csv").write_text("a\n1\n")
    for name, make in workspaces(scale).items():
        if only and only not in name:
            continue
        store = CheckpointStore(scratch / f"{backend}-{name.replace(' ', '_')}")
        with started(backend, public) as sandbox:
            timed(sandbox, f"cd /home/code && {make}")
            tar_c = timed(sandbox, "tar -cf /tmp/tree.tar -C /home/code .")
            tar_size = int(sandbox.run("stat -c %s /tmp/tree.tar", 30).output.strip())
            tar_x = timed(sandbox, "mkdir /tmp/back && tar -xf /tmp/tree.tar -C /tmp/back")
            timed(sandbox, "rm -rf /tmp/tree.tar /tmp/back")
            slow = None
            if name.endswith("files"):  # (files over 256 KiB are never read into memory)
                with on_disk(sandbox):  # the same captures, each file through a scratch file
                    slow = two_captures(sandbox, CheckpointStore(scratch / "on-disk"))[1:3]
                shutil.rmtree(scratch / "on-disk")
            folder, first, again, size, added = two_captures(sandbox, store)
        with started(backend, public) as fresh:
            start = time.perf_counter()
            report = restore(fresh, folder)
            back = time.perf_counter() - start
        shutil.rmtree(store.root)
        print(
            f"  {name:14} capture {first:7.2f} s ({first / tar_c:5.1f}x tar -c {tar_c:6.2f} s), "
            f"again {again:6.2f} s (+{added:,} bytes), restore {back:7.2f} s "
            f"({back / tar_x:5.1f}x tar -x {tar_x:6.2f} s), {report.files:,} files; "
            f"stored {size / MB:8.1f} MB vs tar {tar_size / MB:8.1f} MB"
        )
        if slow is not None:
            print(
                f"  {'':14} each file through a scratch file (before in-memory reads): "
                f"capture {slow[0]:7.2f} s ({slow[0] / first:4.1f}x), "
                f"again {slow[1]:6.2f} s ({slow[1] / again:4.1f}x)"
            )


def two_captures(sandbox: Sandbox, store: CheckpointStore) -> tuple[Path, float, float, int, int]:
    """A first capture into an empty store and a second of the unchanged tree: the first's
    folder, the seconds each took, the bytes stored after the first and those the second
    added."""
    start = time.perf_counter()
    folder = capture(sandbox, store, {})
    first = time.perf_counter() - start
    size = stored_bytes(store.root)
    start = time.perf_counter()
    capture(sandbox, store, {})
    again = time.perf_counter() - start
    return folder, first, again, size, stored_bytes(store.root) - size


@contextlib.contextmanager
def on_disk(sandbox: Sandbox) -> Iterator[None]:
    """Captures as before many files were read into memory: the sandbox offers no
    `read_files`, so each file is written to a scratch file and moved into the store."""
    sandbox.read_files = lambda *args, **kwargs: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        del sandbox.read_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["local", "docker", "both"], default="both")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", help="run the workspaces whose name holds this text")
    args = parser.parse_args()
    print("load average (1, 5, 15 min) at the start: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="mle-gym-ckpt-bench-") as scratch:
        for backend in ("local", "docker") if args.backend == "both" else (args.backend,):
            bench(backend, args.scale, Path(scratch), args.only)
    print("load average (1, 5, 15 min) at the end: {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()

"""The NVIDIA GPUs a local (bubblewrap) sandbox gets: device nodes, driver files, masking.

`CUDA_VISIBLE_DEVICES` is advice to CUDA, not isolation: a process that sees
`/dev/nvidia3` can open it. So a sandbox gets the device node of each chosen GPU and no
other, plus the driver's shared control nodes (`nvidiactl`, `nvidia-uvm`, ...). GPUs are
named as `nvidia-smi` numbers them (by PCI bus id) or by UUID; the kernel module lists each
GPU under `/proc/driver/nvidia/gpus/<pci id>/information` with its UUID and the minor number
of its `/dev/nvidia<minor>` node, which need not equal its index. The entries of the GPUs
not chosen are hidden under the sandbox's /proc, as the NVIDIA container toolkit does.
The driver's user-space libraries and `nvidia-smi` are bound read-only where they live
outside the system directories the sandbox already has.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mle_gym.sandbox.base import SandboxError
from mle_gym.sandbox.gpus import GpuSpec

#: Nodes every CUDA process needs besides its GPU's own, where the host has them.
SHARED_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
#: The driver's user-space libraries a CUDA program or nvidia-smi loads.
DRIVER_LIBRARIES = re.compile(r"^lib(cuda|nvidia-[a-z0-9-]+|nvcuvid|nvoptix)\.so")
#: Directories the sandbox binds anyway (local.py's system binds).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class NoNvidiaDriver(SandboxError):
    """GPUs were asked for on a host without a working NVIDIA driver."""


@dataclass(frozen=True)
class NvidiaGpu:
    """One GPU as the kernel module lists it."""

    index: int
    pci: str
    uuid: str
    minor: int


@dataclass(frozen=True)
class GpuBinds:
    """What bubblewrap must add for the chosen GPUs, and the shell's extra search paths.
    `devices` pairs each host node with its place under the sandbox's /dev."""

    gpus: tuple[NvidiaGpu, ...]
    devices: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]
    read_only: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    library_path: tuple[str, ...] = ()

    def bwrap_args(self) -> list[str]:
        """Device binds, /proc entries of other GPUs hidden, driver files read-only. They
        come after `--dev` and `--proc`, which they add to."""
        args: list[str] = []
        for node, target in self.devices:
            args += ["--dev-bind", node, target]
        for entry in self.hidden:
            args += ["--tmpfs", entry]
        for place in self.read_only:
            args += ["--ro-bind", place, place]
        return args

    def environment(self) -> dict[str, str]:
        """Variables that let the shell find the driver's tools and libraries."""
        env = {"NVIDIA_VISIBLE_DEVICES": ",".join(g.uuid for g in self.gpus)}
        if self.library_path:
            env["LD_LIBRARY_PATH"] = ":".join(self.library_path)
        return env


def host_gpus(proc: Path = Path("/proc"), dev: Path = Path("/dev")) -> list[NvidiaGpu]:
    """The host's GPUs in `nvidia-smi`'s order; NoNvidiaDriver when there is no driver."""
    listing = proc / "driver" / "nvidia" / "gpus"
    if not (proc / "driver" / "nvidia" / "version").exists() or not (dev / "nvidiactl").exists():
        raise NoNvidiaDriver(
            "GPUs were asked for, but this host has no NVIDIA driver loaded (no "
            f"{proc}/driver/nvidia/version or {dev}/nvidiactl): install the driver, or run "
            "without the `gpus` sandbox option"
        )
    gpus = []
    for index, entry in enumerate(sorted(listing.iterdir()) if listing.is_dir() else []):
        facts = _information(entry / "information")
        gpus.append(
            NvidiaGpu(
                index=index,
                pci=entry.name,
                uuid=facts.get("GPU UUID", ""),
                minor=int(facts.get("Device Minor", index)),
            )
        )
    return gpus


def _information(path: Path) -> dict[str, str]:
    facts: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            facts[key.strip()] = value.strip()
    return facts


def choose(gpus: GpuSpec, available: Sequence[NvidiaGpu]) -> list[NvidiaGpu]:
    """The GPUs a `gpus` setting names: "all", the first n, or ids (indexes or UUIDs)."""
    if gpus is None:
        return []
    if gpus == "all":
        chosen = list(available)
    elif isinstance(gpus, (bool, str)):
        raise ValueError(f"gpus must be None, 'all', a count or a list of device ids, not {gpus!r}")
    elif isinstance(gpus, int):
        if gpus < 0:
            raise ValueError("a GPU count cannot be negative")
        if gpus > len(available):
            raise NoNvidiaDriver(f"{gpus} GPUs were asked for; this host has {len(available)}")
        chosen = list(available[:gpus])
    else:
        chosen = [_find(str(wanted), available) for wanted in gpus]
    if not chosen and gpus:
        raise NoNvidiaDriver("GPUs were asked for, but the NVIDIA driver lists none")
    return list(dict.fromkeys(chosen))


def _find(wanted: str, available: Sequence[NvidiaGpu]) -> NvidiaGpu:
    for gpu in available:
        if wanted == str(gpu.index) or (gpu.uuid and wanted == gpu.uuid):
            return gpu
    names = ", ".join(f"{g.index} ({g.uuid})" for g in available) or "none"
    raise NoNvidiaDriver(f"no GPU {wanted!r} on this host; it has: {names}")


def gpu_binds(
    gpus: GpuSpec,
    proc: Path = Path("/proc"),
    dev: Path = Path("/dev"),
    library_dirs: Sequence[str] | None = None,
    tools: Sequence[str] | None = None,
) -> GpuBinds | None:
    """The binds of a `gpus` setting (None when no GPU is asked for). `library_dirs` and
    `tools` default to where this host's driver libraries and `nvidia-smi` are."""
    if gpus is None or gpus == [] or gpus == 0:
        return None
    chosen = choose(gpus, host_gpus(proc, dev))
    names = [f"nvidia{g.minor}" for g in chosen]
    names += [name for name in SHARED_NODES if (dev / name).exists()]
    names += ["nvidia-caps"] if (dev / "nvidia-caps").is_dir() else []
    nodes = [(str(dev / name), f"/dev/{name}") for name in names]
    chosen_pci = {g.pci for g in chosen}
    listing = proc / "driver" / "nvidia" / "gpus"
    hidden = [
        f"/proc/driver/nvidia/gpus/{entry.name}"
        for entry in sorted(listing.iterdir())
        if entry.name not in chosen_pci
    ]
    libraries = [d for d in (library_dirs or _driver_library_dirs()) if not _system(d)]
    tool_dirs = [
        os.path.dirname(t) for t in (tools or _driver_tools()) if not _system(os.path.dirname(t))
    ]
    extra = list(dict.fromkeys([*libraries, *tool_dirs]))
    return GpuBinds(
        gpus=tuple(chosen),
        devices=tuple(nodes),
        hidden=tuple(hidden),
        read_only=tuple(extra),
        path=tuple(dict.fromkeys(tool_dirs)),
        library_path=tuple(libraries),
    )


def _system(directory: str) -> bool:
    return any(directory == top or directory.startswith(top + "/") for top in SYSTEM_DIRS)


def _driver_library_dirs() -> list[str]:
    """Directories of the driver's libraries: the linker cache's, then LD_LIBRARY_PATH's."""
    found: list[str] = []
    try:
        cache = subprocess.run(
            ["ldconfig", "-p"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        cache = ""
    for line in cache.splitlines():
        name, _, target = line.strip().partition(" => ")
        if DRIVER_LIBRARIES.match(name.split(" ")[0]) and target:
            found.append(os.path.dirname(os.path.realpath(target)))
    for directory in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":")):
        if os.path.isdir(directory) and any(
            DRIVER_LIBRARIES.match(n) for n in os.listdir(directory)
        ):
            found.append(os.path.realpath(directory))
    return list(dict.fromkeys(found))


def _driver_tools() -> list[str]:
    smi = shutil.which("nvidia-smi")
    return [os.path.realpath(smi)] if smi else []


def listed_gpus() -> list[tuple[str, str]]:
    """(name, driver version) of each GPU as `nvidia-smi` lists them; [] where it is not
    installed or fails (what a run records and what MLE-bench's prompt calls the hardware)."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    listed = [line.partition(",") for line in out.splitlines()]
    return [(name.strip(), driver.strip()) for name, _, driver in listed if name.strip()]

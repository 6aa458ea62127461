"""GPUs in the local sandbox, without a GPU: a fake driver tree stands for the host's.

The tree has what the NVIDIA kernel module shows (/proc/driver/nvidia/{version,gpus/<pci>/
information}) and device nodes (regular files here). Two GPUs whose minor numbers run
against their nvidia-smi order check that a GPU's node is found by its minor number, not
its index. A real bubblewrap sandbox given the fake nodes shows only the chosen GPU's.
The real-GPU check is benchmarks/gpu_local_sandbox_check.sh (run where a GPU is lent).
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import gymnasium as gym
import pytest
from conftest import require_bwrap

from mle_gym.sandbox import LocalSandbox, SandboxSpec
from mle_gym.sandbox.nvidia_devices import NoNvidiaDriver, choose, gpu_binds, host_gpus

# index 0 (lower PCI id) has minor 1; index 1 has minor 0
GPUS = [("0000:01:00.0", "GPU-aaaa", 1), ("0000:02:00.0", "GPU-bbbb", 0)]


@pytest.fixture
def driver(tmp_path: Path) -> tuple[Path, Path]:
    proc, dev = tmp_path / "proc", tmp_path / "dev"
    (proc / "driver" / "nvidia").mkdir(parents=True)
    (proc / "driver" / "nvidia" / "version").write_text("NVRM version: 550.0\n")
    for pci, uuid, minor in GPUS:
        entry = proc / "driver" / "nvidia" / "gpus" / pci
        entry.mkdir(parents=True)
        (entry / "information").write_text(
            f"Model: \t\t Fake GPU\nGPU UUID: \t {uuid}\nDevice Minor: \t {minor}\n"
        )
    dev.mkdir()
    for name in ("nvidiactl", "nvidia-uvm", "nvidia0", "nvidia1"):
        (dev / name).write_text(name)
    (dev / "nvidia-caps").mkdir()
    return proc, dev


def test_gpus_are_listed_in_pci_order_with_their_minor_numbers(driver) -> None:
    gpus = host_gpus(*driver)
    assert [(g.index, g.pci, g.uuid, g.minor) for g in gpus] == [
        (0, "0000:01:00.0", "GPU-aaaa", 1),
        (1, "0000:02:00.0", "GPU-bbbb", 0),
    ]


@pytest.mark.parametrize(
    ("wanted", "minors"),
    [(["1"], [0]), ([0], [1]), (["GPU-bbbb"], [0]), ("all", [1, 0]), (1, [1]), ([1, "1"], [0])],
)
def test_the_chosen_gpus_and_only_they_are_bound(driver, wanted, minors: list[int]) -> None:
    proc, dev = driver
    binds = gpu_binds(wanted, proc, dev, library_dirs=[], tools=[])
    assert binds is not None
    gpu_nodes = [target for _, target in binds.devices if target[-1].isdigit()]
    assert gpu_nodes == [f"/dev/nvidia{m}" for m in minors]
    assert {t for _, t in binds.devices} - set(gpu_nodes) == {
        "/dev/nvidiactl",
        "/dev/nvidia-uvm",
        "/dev/nvidia-caps",
    }
    assert all(source.startswith(str(dev)) for source, _ in binds.devices)
    chosen = {g.pci for g in binds.gpus}
    assert set(binds.hidden) == {
        f"/proc/driver/nvidia/gpus/{pci}" for pci, _, _ in GPUS if pci not in chosen
    }
    args = binds.bwrap_args()
    for source, target in binds.devices:
        assert ["--dev-bind", source, target] in [args[i : i + 3] for i in range(len(args))]


def test_driver_files_outside_the_system_directories_are_bound_and_searched(driver) -> None:
    binds = gpu_binds(
        [0],
        *driver,
        library_dirs=["/usr/lib/x86_64-linux-gnu", "/opt/nvidia/lib64"],
        tools=["/usr/bin/nvidia-smi", "/opt/nvidia/bin/nvidia-smi"],
    )
    assert binds is not None
    assert binds.read_only == ("/opt/nvidia/lib64", "/opt/nvidia/bin")
    assert binds.path == ("/opt/nvidia/bin",)
    assert binds.environment() == {
        "NVIDIA_VISIBLE_DEVICES": "GPU-aaaa",
        "LD_LIBRARY_PATH": "/opt/nvidia/lib64",
    }


def test_wrong_requests_and_missing_drivers_say_what_is_there(driver, tmp_path: Path) -> None:
    gpus = host_gpus(*driver)
    with pytest.raises(NoNvidiaDriver, match="3 GPUs were asked for; this host has 2"):
        choose(3, gpus)
    with pytest.raises(NoNvidiaDriver, match=r"no GPU '7' on this host; it has: 0 \(GPU-aaaa\)"):
        choose([7], gpus)
    with pytest.raises(ValueError, match="a count or a list"):
        choose("0", gpus)
    assert gpu_binds(None, *driver) is None and gpu_binds(0, *driver) is None
    with pytest.raises(NoNvidiaDriver, match="no NVIDIA driver"):
        host_gpus(tmp_path / "no-proc", tmp_path / "no-dev")


def test_a_host_without_a_driver_refuses_at_make() -> None:
    """This machine has no NVIDIA driver: the env fails when made, saying so."""
    if Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this host has an NVIDIA driver")
    require_bwrap()
    with pytest.raises(NoNvidiaDriver, match="no NVIDIA driver"):
        gym.make("mle/sklearn-digits-v0", sandbox_options={"gpus": [0]})
    with pytest.raises(ValueError, match="isolation='bwrap'"):
        LocalSandbox(isolation="none", gpus=[0])


def test_a_real_sandbox_sees_only_the_chosen_gpus_nodes(driver) -> None:
    """The fake nodes, bound by bubblewrap at /dev: the sandbox finds its GPU's node and the
    shared ones, not the other GPU's. (The /proc entries to hide exist only where a driver
    is loaded, so they are left out here.)"""
    require_bwrap()
    binds = gpu_binds(["1"], *driver, library_dirs=[], tools=[])
    assert binds is not None
    box = LocalSandbox()
    box.gpus = dataclasses.replace(binds, hidden=())
    box.start(SandboxSpec(Path(tempfile.mkdtemp())))
    try:
        listed = box.run("ls -d /dev/nvidia*; cat /dev/nvidia0; echo; env", 20).output
    finally:
        box.stop()
    assert "/dev/nvidia0\n" in listed and "/dev/nvidia1" not in listed, listed
    assert "/dev/nvidiactl" in listed and "/dev/nvidia-caps" in listed
    assert "\nnvidia0\n" in listed  # the node bound is the chosen GPU's own (minor 0)
    assert "NVIDIA_VISIBLE_DEVICES=GPU-bbbb" in listed

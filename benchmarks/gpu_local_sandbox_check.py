"""Device check (issue 29): GPUs inside a local (bubblewrap) sandbox, on a machine with one.

    python benchmarks/gpu_local_sandbox_check.py [--gpus 0]

Starts a LocalSandbox with `gpus`, then inside it runs `nvidia-smi -L` and a PyTorch CUDA
matrix product (the host interpreter's PyTorch: the sandbox binds the Python mle_gym runs
with). Prints the GPUs the host lists and those the sandbox lists (they must be exactly the
chosen ones), the product's check against the CPU and its TFLOP/s. Exit status 0 only when
both hold.

Where the GPU machine has no bubblewrap and no network (the `device` tool's machines), carry
it as Debian packages downloaded beforehand, and mle_gym's own dependencies as wheels:
  apt-get download bubblewrap libseccomp2   # into .debs/, then on the machine:
  for f in .debs/*.deb; do dpkg -x "$f" /opt/bw; done; export PATH=/opt/bw/usr/bin:$PATH
  export LD_LIBRARY_PATH=/opt/bw/usr/lib/x86_64-linux-gnu
(wheels for gymnasium, pexpect, ptyprocess, docker and their needs, as the device README
says). Some GPU machines run a kernel sandbox (gVisor) of their own in which bubblewrap's
namespaces may be refused; the script then says so.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from mle_gym.sandbox import LocalSandbox, SandboxSpec

MATMUL = """
import time, torch
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
c = a @ b
torch.cuda.synchronize()
start = time.perf_counter()
for _ in range(10):
    c = a @ b
torch.cuda.synchronize()
seconds = (time.perf_counter() - start) / 10
small = (a[:256].float() @ b[:, :256].float()).cpu()
check = (c[:256, :256].float().cpu() - small).abs().max().item() / small.abs().max().item()
print(f"devices {torch.cuda.device_count()} name {torch.cuda.get_device_name(0)}")
print(f"bf16 {n}^3 matmul {2 * n**3 / seconds / 1e12:.0f} TFLOP/s relative error {check:.4f}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", default="0", help="comma-separated ids, or 'all'")
    args = parser.parse_args()
    gpus = "all" if args.gpus == "all" else [g for g in args.gpus.split(",") if g]
    host = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False)
    print("host:\n" + host.stdout.strip())
    box = LocalSandbox(gpus=gpus, memory=None, cpus=None)
    try:
        box.start(SandboxSpec(Path(tempfile.mkdtemp())))
    except Exception as exc:  # the reason is the finding on such a machine
        print(f"the local sandbox could not start here: {type(exc).__name__}: {exc}")
        return 2
    try:
        listed = box.run("nvidia-smi -L", 120).output.strip()
        product = box.run(f"{sys.executable} -c '{MATMUL}'", 600).output.strip()
    finally:
        box.stop()
    print("sandbox:\n" + listed + "\n" + product)
    assert box.gpus is not None
    wanted = {g.uuid for g in box.gpus.gpus}
    lines = [line for line in listed.splitlines() if "UUID: " in line]
    seen = {line.rsplit("UUID: ", 1)[-1].rstrip(")") for line in lines}
    matmul_ok = "relative error" in product and float(product.rsplit(" ", 1)[-1]) < 0.05
    print(f"exactly the chosen GPUs: {seen == wanted}; matrix product correct: {matmul_ok}")
    return 0 if seen == wanted and matmul_ok else 1


if __name__ == "__main__":
    sys.exit(main())

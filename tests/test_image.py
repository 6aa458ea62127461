"""Tests of the offline agent image against the real Docker engine.

They need a running engine (``.ci/docker-up.sh``). Without one they skip,
except under CI (``CI=true``), where a missing engine is a failure: CI
must not go green by silently skipping the sandbox.
"""

from __future__ import annotations

import uuid

import pytest

from mle_gym.sandbox.image import OFFLINE_IMAGE, build_offline_image

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def docker_client(docker_engine):
    return docker_engine


@pytest.fixture(scope="module")
def offline_image(docker_client):
    """The offline image, built if missing (reused when present)."""
    return build_offline_image(log=lambda line: None)


def _run(client, image: str, command: list[str], **kwargs) -> tuple[int, str, str]:
    """Run a throw-away sandbox-like container; return (exit code, stdout, container name)."""
    name = f"mle-gym-test-{uuid.uuid4().hex[:12]}"
    container = client.containers.create(
        image,
        command,
        name=name,
        user="agent",
        network_mode="none",
        **kwargs,
    )
    try:
        container.start()
        code = container.wait(timeout=120)["StatusCode"]
        out = container.logs(stdout=True, stderr=True).decode()
    finally:
        container.remove(force=True)
    return code, out, name


def test_offline_image_exists(docker_client, offline_image):
    image = docker_client.images.get(offline_image)
    assert OFFLINE_IMAGE in image.tags
    assert image.attrs["Config"]["WorkingDir"] == "/home/code"


def test_python_stack_runs_as_agent_without_network(docker_client, offline_image):
    script = (
        "import os, numpy, pandas, sklearn, scipy; "
        "print(os.getuid(), os.getgid()); "
        "print(sorted(os.listdir('/sys/class/net'))); "
        "print('ok')"
    )
    code, out, name = _run(docker_client, offline_image, ["python3", "-c", script])
    assert code == 0, out
    lines = out.split()
    assert out.strip().splitlines()[0] == "1000 1000", out
    assert "['lo']" in out, f"network_mode=none should leave only loopback: {out}"
    assert lines[-1] == "ok"
    # the container is gone afterwards
    assert not docker_client.containers.list(all=True, filters={"name": name})


def test_python_alias_and_xgboost(docker_client, offline_image):
    code, out, _ = _run(
        docker_client,
        offline_image,
        ["python", "-c", "import xgboost; print('xgb ok')"],
    )
    assert code == 0, out
    assert out.strip().endswith("xgb ok")


def test_sandbox_directories(docker_client, offline_image):
    script = (
        "for d in /home/data /home/code /home/submission /home/logs; do "
        '  test -d "$d" || { echo "missing $d"; exit 1; }; '
        "done; "
        "stat -c '%n %u' /home/code /home/submission; "
        "touch /home/submission/x /home/code/y && echo writable; "
        "touch /home/data/z 2>/dev/null && echo data-writable || echo data-readonly; "
        "pwd"
    )
    code, out, _ = _run(docker_client, offline_image, ["bash", "-c", script])
    assert code == 0, out
    assert "/home/code 1000" in out
    assert "/home/submission 1000" in out
    assert "writable" in out.splitlines()
    assert "data-readonly" in out
    assert out.strip().splitlines()[-1] == "/home/code"

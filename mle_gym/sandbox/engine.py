"""Connecting to the Docker engine, with one clear error for every way that can fail."""

from __future__ import annotations

import docker
import requests
from docker.errors import DockerException


class DockerUnavailableError(RuntimeError):
    """The Docker engine cannot be reached (no daemon, or no permission)."""


def connect() -> docker.DockerClient:
    """A client that has answered a ping."""
    try:
        client = docker.from_env()
        client.ping()
    except (DockerException, requests.exceptions.RequestException, OSError) as exc:
        raise DockerUnavailableError(
            "cannot reach the Docker engine "
            f"({exc}). Start dockerd first: as root run `.ci/docker-up.sh` "
            "(Debian: `apt-get install docker.io` then `dockerd &`), and make sure "
            "DOCKER_HOST points at it if it does not listen on /var/run/docker.sock."
        ) from exc
    return client

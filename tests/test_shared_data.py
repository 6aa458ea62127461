"""Envs of one competition share one read-only public tree: each sandbox sees the host's own
files (same inode), never a copy, and cannot change them (issue 13, item 7)."""

from __future__ import annotations

import os

import gymnasium as gym


def test_envs_mount_the_same_public_files_read_only(digits_home, backend, monkeypatch):
    monkeypatch.setenv("MLE_GYM_HOME", str(digits_home))
    host = digits_home / "sklearn-digits" / "public" / "train.csv"
    envs = [gym.make("mle/sklearn-digits-v0", backend=backend) for _ in range(3)]
    try:
        for env in envs:
            env.reset()
            inode, *_ = env.step("stat -L -c %i /home/data/train.csv")
            assert int(inode) == os.stat(host).st_ino  # the host's file itself
            refused, *_ = env.step("echo x >> /home/data/train.csv && echo written")
            assert "written" not in refused
    finally:
        for env in envs:
            env.close()

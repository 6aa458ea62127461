"""Checkpoints of a running episode's sandbox: a run's content-addressed store (store.py)
and capturing and restoring a workspace and its shell (workspace.py). Imports the sandbox
layer only."""

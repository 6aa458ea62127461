"""The file naming a snapshot folder's kept copies, in a module of its own: grading the
snapshots off the env (`mle_gym.evaluation`) reads it without loading the env, its sandboxes
or its tools."""

INDEX_FILE = "snapshots.json"

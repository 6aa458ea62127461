"""Reading run directories: MLE-bench's aggregation, pass@k, score over time, published
figures, audits, exports.

Runs are read through the records layer (`mle_gym.runs`), which batch writes through;
analysis imports no batch, env or sandbox code, and this `__init__` imports nothing, so
importing one analysis module loads only what that module needs.
"""

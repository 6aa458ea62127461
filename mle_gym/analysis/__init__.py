"""Reading run directories: score over time (more to come: aggregation, audits, exports).

Batch writes run directories and knows nothing of this package; the CLI reads runs through it.
"""

"""Reading run directories: MLE-bench's aggregation, pass@k, score over time, published
figures, audits, exports.

Batch writes run directories and knows nothing of this package; the CLI reads runs through it.
"""

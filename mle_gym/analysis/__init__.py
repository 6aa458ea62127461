"""Reading run directories: MLE-bench's aggregation, pass@k, published figures, exports.

Batch writes run directories and knows nothing of this package; the CLI reads runs through it.
"""

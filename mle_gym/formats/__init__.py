"""Encodings that both prepare (competitions) and grading use: RLE masks, answers packed
into one column, and CSV files read as exact text.

A layer below both: a competition writes its answers with these at prepare time, and the
grader reads them back with the same code, so neither side imports the other. Nothing here
knows about gym, sandboxes, grading's verdicts or any competition.
"""

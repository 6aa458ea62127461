"""mle_gym's version, in a module of its own so that a layer below the package's top
(grading keys its answer caches by it) reads it without importing `mle_gym` itself."""

__version__ = "0.1.0"

import pytest

# The shared checks in support.py use plain asserts: have pytest rewrite them as it does in
# test modules, so that a failure shows the values compared.
pytest.register_assert_rewrite("tests.competitions.support")

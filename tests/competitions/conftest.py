"""The `dirs` fixture of the per-competition tests, for the competition each module names."""

from __future__ import annotations

import pytest

from mle_gym.data import CompetitionDirs
from tests.competitions.support import prepared_dirs


@pytest.fixture(scope="module")
def dirs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> CompetitionDirs:
    """The test module's competition (its module-level `COMP`), prepared once per module."""
    return prepared_dirs(request.module.COMP, tmp_path_factory)

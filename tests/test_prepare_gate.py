"""The prepared-data gate (`mle_gym.data.require_prepared`): bundled data prepares itself
once, under the competition's prepare lock; anything else missing stops with one message
that says how to prepare it, naming every competition missing at once."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from mle_gym.competitions import get_competition
from mle_gym.data import (
    CompetitionDirs,
    NotPrepared,
    prepare,
    require_all_prepared,
    require_prepared,
)
from mle_gym.data.gate import prepare_lock


def test_kaggle_data_missing_says_how_to_prepare_it(mle_home: Path) -> None:
    with pytest.raises(NotPrepared) as caught:
        require_prepared("spaceship-titanic")
    message = str(caught.value)
    assert f"spaceship-titanic is not prepared in {mle_home}" in message
    assert "`mle-gym prepare spaceship-titanic --raw DIR_OR_ZIP`" in message
    assert not (mle_home / "spaceship-titanic").exists()  # asking created nothing


def test_bundled_data_prepares_itself_only_when_asked_to(mle_home: Path) -> None:
    with pytest.raises(NotPrepared, match="sklearn-digits is not prepared"):
        require_prepared("sklearn-digits", auto=False)
    dirs = require_prepared("sklearn-digits")
    assert dirs == CompetitionDirs.of("sklearn-digits") and dirs.is_prepared()
    assert require_prepared("sklearn-digits", auto=False) == dirs


def test_every_missing_competition_is_named_in_one_error(mle_home: Path) -> None:
    ids = ["spaceship-titanic", "sklearn-digits", "tabular-playground-series-may-2022"]
    with pytest.raises(NotPrepared) as caught:
        require_all_prepared(ids)
    message = str(caught.value)
    assert message.startswith("spaceship-titanic, tabular-playground-series-may-2022 are not")
    assert "`mle-gym prepare spaceship-titanic tabular-playground-series-may-2022`" in message
    assert CompetitionDirs.of("sklearn-digits").is_prepared()  # the bundled one was prepared


def test_a_second_process_waits_for_the_preparation_under_way(mle_home: Path) -> None:
    """While one process prepares under the lock, another asking for the data waits, then
    takes that preparation rather than making its own (a batch's workers share one cache)."""
    dirs = CompetitionDirs.of("sklearn-digits")
    script = (
        "from mle_gym.data import require_prepared\n"
        "print(require_prepared('sklearn-digits').preparation_record()['prepared_at'])"
    )
    with prepare_lock(dirs):
        waiting = subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
        )
        time.sleep(4)  # it has imported and reached the lock
        assert waiting.poll() is None and not dirs.is_prepared()
        ours = prepare(get_competition("sklearn-digits")).dirs.preparation_record()["prepared_at"]
    out, _ = waiting.communicate(timeout=120)
    assert waiting.returncode == 0 and out.strip() == ours

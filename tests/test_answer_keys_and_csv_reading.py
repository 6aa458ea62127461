"""The answer key kept on disk follows the answers, and the fast CSV reader reads what
pandas reads or hands the file to pandas (issue 11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mle_gym.competitions import get_competition
from mle_gym.formats.csv_text import UnreadableCsv, read_with_pandas
from mle_gym.grading import InvalidSubmission
from mle_gym.grading.answer_keys import FOLDER
from mle_gym.grading.csv_text import read_as_text
from mle_gym.grading.grader import score_submission

COMP = get_competition("spaceship-titanic")


def _setup(tmp_path: Path, truth: list[bool]) -> tuple[Path, Path]:
    private = tmp_path / "private"
    private.mkdir(exist_ok=True)
    ids = [f"{i:04d}_01" for i in range(len(truth))]
    pd.DataFrame({"PassengerId": ids, "Transported": truth}).to_csv(
        private / "test.csv", index=False
    )
    submission = tmp_path / "submission.csv"
    pd.DataFrame({"PassengerId": ids[::-1], "Transported": [True] * len(ids)}).to_csv(
        submission, index=False
    )
    return private, submission


def test_the_key_is_written_once_and_reused(tmp_path):
    private, submission = _setup(tmp_path, [True, False, True, True])
    assert score_submission(COMP, submission, private)[0] == 0.75
    keys = list((private / FOLDER).glob("*.arrow"))
    assert len(keys) == 1
    written = keys[0].stat().st_mtime_ns
    assert score_submission(COMP, submission, private)[0] == 0.75
    assert keys[0].stat().st_mtime_ns == written


def test_a_key_built_by_its_own_reader_is_reused_by_the_next_process(tmp_path):
    """A competition that reads its answers with its own function (champs packs the
    coupling type with each value) keeps one key across processes: the function's repr,
    which holds its address, must not enter the key's name."""
    private = tmp_path / "private"
    private.mkdir()
    pd.DataFrame(
        {"id": [1, 2, 3], "type": ["1JHC", "2JHH", "1JHC"], "scalar_coupling_constant": [1.0, 2, 3]}
    ).to_csv(private / "answers.csv", index=False)
    submission = tmp_path / "submission.csv"
    submission.write_text("id,scalar_coupling_constant\n3,3.5\n1,1.0\n2,2.0\n")
    grade = (
        "import sys; from pathlib import Path; from mle_gym.competitions import get_competition;"
        "from mle_gym.grading.grader import score_submission;"
        "print(score_submission(get_competition('champs-scalar-coupling'),"
        " Path(sys.argv[1]), Path(sys.argv[2]))[0])"
    )
    scores, stamps = [], []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", grade, str(submission), str(private)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        scores.append(out.stdout.strip())
        stamps.append([(k.name, k.stat().st_mtime_ns) for k in (private / FOLDER).iterdir()])
    assert scores[0] == scores[1] and len(stamps[0]) == 1
    assert stamps[1] == stamps[0]


def test_changed_answers_make_a_new_key(tmp_path):
    private, submission = _setup(tmp_path, [True, False, True, True])
    assert score_submission(COMP, submission, private)[0] == 0.75
    _setup(tmp_path, [False, False, True, True])
    os.utime(private / "test.csv", ns=(1, 1))  # even with an older time stamp
    assert score_submission(COMP, submission, private)[0] == 0.5
    assert len(list((private / FOLDER).glob("*.arrow"))) == 1  # the old key is gone


def test_a_damaged_key_is_rebuilt(tmp_path):
    private, submission = _setup(tmp_path, [True, False, True, True])
    score_submission(COMP, submission, private)
    (key,) = (private / FOLDER).glob("*.arrow")
    key.write_bytes(b"not arrow at all")
    assert score_submission(COMP, submission, private)[0] == 0.75


def test_grading_goes_on_where_no_key_can_be_written(tmp_path):
    private, submission = _setup(tmp_path, [True, False, True, True])
    (private / FOLDER).write_text("a file where the folder would go")
    assert score_submission(COMP, submission, private)[0] == 0.75
    assert score_submission(COMP, submission, private)[0] == 0.75
    assert (private / FOLDER).is_file()


TRICKY = {
    "plain": "a,b\n1,x\n2,y\n",
    "bom": "\ufeffa,b\n1,x\n",
    "crlf": "a,b\r\n1,x\r\n2,y\r\n",
    "quoted newline": 'a,b\n1,"two\nlines"\n2,"say ""hi"""\n',
    "blank lines": "a,b\n\n1,x\n\n2,y\n",
    "spaces kept": "a, b\n 1 , x \n",
    "empty cells": "a,b\n1,\n,y\n",
    "no final newline": "a,b\n1,x",
    "utf-8 text": "a,b\n1,naïve ☃\n",
    "ragged short": "a,b\n1\n2,y\n",
    "ragged long": "a,b\n1,x,extra\n",
    "header only": "a,b\n",
    "blank name": "a,\n1,x\n",
    "repeated name": "a,a\n1,x\n",
    "na words": "a,b\nNA,null\nNaN,None\n",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_the_fast_reader_reads_what_pandas_reads(name, tmp_path):
    path = tmp_path / "file.csv"
    path.write_bytes(TRICKY[name].encode())
    try:
        expected = read_with_pandas(path)
    except UnreadableCsv as exc:
        with pytest.raises(InvalidSubmission, match="not a readable CSV"):
            read_as_text(path)
        assert "readable" in str(exc)
        return
    got = read_as_text(path)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert all(isinstance(v, str) for v in got.to_numpy().ravel())


def test_invalid_utf8_is_refused_as_pandas_refuses_it(tmp_path):
    path = tmp_path / "file.csv"
    path.write_bytes(b"a,b\n1,\xff\xfe\n")
    with pytest.raises(InvalidSubmission, match="not a readable CSV"):
        read_as_text(path)


@pytest.mark.parametrize("width", [16, 13])
def test_a_stored_key_keeps_fixed_width_ids_once(width, tmp_path):
    """Ids all 8 x words bytes long (H&M's 64 hex characters) are their own packed words:
    the key file keeps them once, in its id column, and the key read back still lines a
    shuffled submission up (ids of other lengths keep their own packed column)."""
    import pyarrow as pa

    from mle_gym.grading.answer_keys import INDEX_PREFIX, load_key

    comp = get_competition("h-and-m-personalized-fashion-recommendations")
    ids = [f"{i * 7919:0{width}x}" for i in range(300)]
    answers = pd.DataFrame({"customer_id": ids, "prediction": ["0108775015"] * 300})
    private = tmp_path / "private"
    private.mkdir()
    built = load_key(comp, private, lambda: answers)
    (stored,) = (private / FOLDER).glob("*.arrow")
    names = pa.ipc.open_file(pa.memory_map(str(stored))).read_all().column_names
    assert (INDEX_PREFIX + "packed" in names) is (width % 8 != 0)
    read = load_key(comp, private, lambda: pytest.fail("the stored key was not read"))
    assert read.ids.is_ids is built.ids.is_ids is (width % 8 == 0)
    shuffled = pa.array(ids[::-1])
    order = read.ids.match(shuffled)
    assert order is not None and shuffled.take(pa.array(order)).equals(pa.array(ids))

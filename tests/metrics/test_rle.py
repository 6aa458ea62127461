"""rle: hand-decoded masks, round trips, overlap counts, and every refusal with its reason."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mle_gym.formats.rle import encode_rle, split_shape, with_shape
from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics.rle import decode_rle, rle_runs, runs_overlap, validate_rle


def test_hand_decoded_column_major() -> None:
    # 3 rows x 2 columns, counted down each column: pixels 1..3 are column 0.
    mask = decode_rle("2 2 6 1", (3, 2))
    assert mask.tolist() == [[False, False], [True, False], [True, True]]


def test_row_major_on_request() -> None:
    mask = decode_rle("2 2", (2, 3), order="C")
    assert mask.tolist() == [[False, True, True], [False, False, False]]


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_blank_is_the_empty_mask(text: str) -> None:
    assert not decode_rle(text, (4, 5)).any()
    assert encode_rle(np.zeros((4, 5), bool)) == ""


def test_touching_runs_and_any_whitespace_are_accepted() -> None:
    assert decode_rle("1 2\t3  2\n", (2, 2)).all()


def test_round_trip_on_random_masks() -> None:
    rng = np.random.default_rng(0)
    for order in ("F", "C"):
        mask = rng.random((37, 23)) < 0.4
        text = encode_rle(mask, order=order)
        assert (decode_rle(text, mask.shape, order=order) == mask).all()


def test_equals_mlebench_decoder_on_a_random_mask() -> None:
    rng = np.random.default_rng(1)
    height, width = 11, 7
    mask = rng.random((height, width)) < 0.5
    text = encode_rle(mask)
    # MLE-bench's decoder fills a flat array run by run and reshapes it (width, height).T.
    flat = np.zeros(height * width, bool)
    numbers = [int(n) for n in text.split()]
    for start, length in zip(numbers[0::2], numbers[1::2], strict=True):
        flat[start - 1 : start - 1 + length] = True
    assert (decode_rle(text, (height, width)) == flat.reshape(width, height).T).all()


def test_overlap_counts_shared_pixels() -> None:
    # a covers 0-4 and 10-14, b covers 3-11: shared 3, 4, 10, 11.
    a = rle_runs("1 5 11 5", 20)
    b = rle_runs("4 9", 20)
    assert runs_overlap(a, b) == 4
    assert runs_overlap(a, a) == 10
    assert runs_overlap(a, rle_runs("", 20)) == 0


def test_overlap_equals_mask_intersection_on_random_masks() -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        x, y = rng.random((2, 30, 40)) < rng.random(2)[:, None, None]
        got = runs_overlap(rle_runs(encode_rle(x), x.size), rle_runs(encode_rle(y), y.size))
        assert got == int((x & y).sum())


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1 2 3", "needs start/length pairs"),
        ("1 2.5", "only integers"),
        ("1,2", "only integers"),
        ("-1 2", "only integers"),
        ("a b", "only integers"),
        ("1 99999999999999999999", "19 or more digits"),
        ("0 2", "starts before pixel 1"),
        ("3 0", "length of at least 1"),
        ("19 3", "ends past the image's last pixel (20)"),
        ("21 1", "ends past the image's last pixel (20)"),
        ("5 1 2 1", "increasing order"),
        ("1 5 3 2", "overlaps the previous run"),
        ("4 1 4 1", "overlaps the previous run"),
    ],
)
def test_refusals_say_why(text: str, reason: str) -> None:
    with pytest.raises(InvalidSubmission, match=re.escape(reason)):
        validate_rle(text, (4, 5))


def test_refusal_names_the_run() -> None:
    with pytest.raises(InvalidSubmission, match=r"run 2 \(start 3, length 2\)"):
        validate_rle("1 5 3 2", (4, 5))


def test_non_text_is_refused() -> None:
    with pytest.raises(InvalidSubmission, match="must be text"):
        validate_rle(None, (2, 2))  # type: ignore[arg-type]


def test_shape_packing_round_trips() -> None:
    cell = with_shape(31278, 25794, "1 5 90 2")
    assert cell == "31278x25794:1 5 90 2"
    assert split_shape(cell) == ((31278, 25794), "1 5 90 2")
    assert split_shape(with_shape(3, 4, "")) == ((3, 4), "")

"""kuzushiji_f1: hand-counted pages, the greedy box order, malformed rows, and a value
computed by MLE-bench's own port of the metric on the same random pages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.grading.errors import InvalidSubmission
from mle_gym.grading.metrics import METRICS
from mle_gym.grading.metrics.kuzushiji_f1 import page_counts

F1 = METRICS["kuzushiji_f1"]


def score(truth: list[str], predicted: list[str]) -> float:
    ids = [f"page{i}" for i in range(len(truth))]
    answers = pd.DataFrame({"image_id": ids, "labels": truth})
    return F1(answers, pd.DataFrame({"image_id": ids, "labels": predicted}), ["labels"])


def test_hand_counted_page() -> None:
    # Box 1 (A, 0..10) takes A(6,6); box 2 (A, 5..15) takes A(7,7); box 3 (B, 20..25) finds
    # nothing; B(30,30) and C(1,1) are unused: TP 2, FP 2, FN 1 -> P 1/2, R 2/3, F1 4/7.
    truth = "A 0 0 10 10 A 5 5 10 10 B 20 20 5 5"
    predicted = "A 6 6 A 7 7 B 30 30 C 1 1"
    assert page_counts(truth, predicted, "p") == (2, 4, 3)
    assert score([truth], [predicted]) == pytest.approx(4 / 7)


def test_boxes_take_the_first_free_point_in_answer_order() -> None:
    # The big box uses up (2, 2), the only point inside the small box: one hit, where a best
    # matching would find two.
    assert score(["A 0 0 10 10 A 0 0 4 4"], ["A 2 2 A 8 8"]) == 0.5
    assert score(["A 0 0 4 4 A 0 0 10 10"], ["A 2 2 A 8 8"]) == 1.0


def test_points_on_the_edge_or_with_another_label_miss() -> None:
    assert score(["A 0 0 10 10"], ["A 10 5"]) == 0.0
    assert score(["A 0 0 10 10"], ["A 5 0"]) == 0.0
    assert score(["A 0 0 10 10"], ["B 5 5"]) == 0.0
    assert score(["A 0 0 10 10"], ["A 9.99 0.01"]) == 1.0


def test_empty_pages_count_only_what_the_other_side_holds() -> None:
    # Page 1: one hit; page 2 (no characters) gets a false positive; page 3's two boxes are
    # missed: TP 1, FP 1, FN 2 -> P 1/2, R 1/3, F1 2/5.
    truth = ["A 0 0 10 10", "", "A 0 0 10 10 B 0 0 10 10"]
    predicted = ["A 1 1", "A 1 1", ""]
    assert score(truth, predicted) == pytest.approx(0.4)
    assert score(["", ""], ["", "nan"]) == 0.0


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("A 1", r"'label x y' triples .* found 2"),
        ("A 1 1 ", r"found 4 space-separated values"),
        ("A  1 1", r"found 4"),
        ("A one 1", r"x and y must be numbers"),
        ("A 1 1 B 2 0x2", r"x and y must be numbers"),
    ],
)
def test_malformed_rows_are_invalid(cell: str, reason: str) -> None:
    with pytest.raises(InvalidSubmission, match=reason):
        score(["A 0 0 10 10", "A 0 0 10 10"], ["A 1 1", cell])


def random_pages(seed: int, pages: int = 60) -> tuple[list[str], list[str]]:
    """Dense pages of overlapping boxes with three labels, and noisy predictions."""
    rng = np.random.default_rng(seed)
    truth, predicted = [], []
    for _ in range(pages):
        boxes = [
            f"L{rng.integers(3)} {rng.integers(60)} {rng.integers(60)} "
            f"{rng.integers(1, 30)} {rng.integers(1, 30)}"
            for _ in range(rng.integers(0, 25))
        ]
        points = [
            f"L{rng.integers(3)} {rng.uniform(0, 90):.1f} {rng.integers(90)}"
            for _ in range(rng.integers(0, 40))
        ]
        truth.append(" ".join(boxes))
        predicted.append(" ".join(points))
    return truth, predicted


def test_matches_mlebench_on_random_dense_pages() -> None:
    # MLE-bench's kuzushiji_f1 on these pages (empty cells as NaN) returned this value.
    assert score(*random_pages(7)) == 0.10712313638873551


def test_small_blocks_give_the_same_score(monkeypatch: pytest.MonkeyPatch) -> None:
    from mle_gym.grading.metrics import kuzushiji_f1

    monkeypatch.setattr(kuzushiji_f1, "_BLOCK", 3)
    assert score(*random_pages(7)) == 0.10712313638873551

"""MAP@12 and MAP@5 against hand-computed average precisions, and their rules for repeats,
short lists and cut-offs (MLE-bench's definition: mlebench.metrics.average_precision_at_k)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mle_gym.grading.metrics import METRICS

map_at_12 = METRICS["map_at_12"]


def _score(truth: list[str], predicted: list[str]) -> float:
    answers = pd.DataFrame({"prediction": truth})
    return map_at_12(answers, pd.DataFrame({"prediction": predicted}), ["prediction"])


def test_average_precision_by_hand() -> None:
    # Hits at ranks 1 and 3 of {a, b, c}: (1/1 + 2/3) / 3.
    assert _score(["a b c"], ["a x b"]) == pytest.approx(5 / 9)
    assert _score(["a"], ["x a"]) == 0.5


def test_repeats_count_once_and_only_twelve_ranks_count() -> None:
    assert _score(["a b"], ["a a b"]) == pytest.approx((1 + 2 / 3) / 2)
    late = [str(i) for i in range(12)] + ["a"]
    assert _score(["a"], [" ".join(late)]) == 0.0
    # More than 12 relevant items: divided by 12, so a full list of hits scores 1.
    many = " ".join(str(i) for i in range(20))
    assert _score([many], [many]) == 1.0


def _by_the_definition(truth: list[str], predicted: list[str], k: int) -> float:
    """MAP@k written as a loop over rows and ranks, straight from the definition."""
    precisions = []
    for answer, guess in zip(truth, predicted, strict=True):
        if answer == "":
            continue
        relevant, seen, hits, total = set(answer.split(" ")), set(), 0, 0.0
        for rank, item in enumerate(guess.split(" ")[:k], start=1):
            if item in relevant and item not in seen:
                hits += 1
                total += hits / rank
            seen.add(item)
        precisions.append(total / min(len(relevant), k))
    return float(np.mean(precisions))


@pytest.mark.parametrize("k", [5, 12])
def test_the_vectorised_metric_equals_the_definition_to_the_last_bit(k: int) -> None:
    """Random rows with repeats, empty items (double spaces), empty answers and lists
    longer than k: every figure equals the row-by-row loop exactly."""
    rng = np.random.default_rng(k)
    items = ["a", "b", "c", "d", "", "e1", "x"]
    for _ in range(200):
        rows = int(rng.integers(1, 30))
        truth = [" ".join(rng.choice(items, rng.integers(0, 4))) for _ in range(rows)]
        guess = [" ".join(rng.choice(items, rng.integers(0, 15))) for _ in range(rows)]
        if all(answer == "" for answer in truth):
            continue
        metric = METRICS[f"map_at_{k}"]
        scored = metric(pd.DataFrame({"c": truth}), pd.DataFrame({"c": guess}), ["c"])
        assert scored == _by_the_definition(truth, guess, k)


def test_rows_with_an_empty_answer_are_not_scored() -> None:
    score = _score(["1 2", "", "3"], ["2 1", "1 2 3", "9 3"])
    assert score == pytest.approx((1.0 + 0.5) / 2)


def test_items_are_compared_as_written() -> None:
    """A leading zero or a double space makes an item that matches nothing."""
    assert _score(["108775015 2"], ["0108775015  2"]) == pytest.approx((1 / 3) / 2)


def _score5(truth: list[str], predicted: list[str]) -> float:
    answers = pd.DataFrame({"Id": truth})
    return METRICS["map_at_5"](answers, pd.DataFrame({"Id": predicted}), ["Id"])


def test_map_at_5_single_answer_scores_one_over_the_first_rank_of_it() -> None:
    # One relevant label per row (hotel-id, whales): AP@5 = 1 / rank of the first hit.
    truth = ["w_a", "w_b", "new_whale", "w_d", "w_e"]
    predicted = [
        "w_a w_x w_y w_z w_q",  # rank 1
        "w_x w_y w_b",  # rank 3, three predictions only
        "w_x new_whale",  # rank 2: new_whale is scored like any label
        "w_1 w_2 w_3 w_4 w_5 w_d",  # rank 6: past the cut-off
        "",  # no prediction at all
    ]
    assert _score5(truth, predicted) == pytest.approx((1 + 1 / 3 + 1 / 2 + 0 + 0) / 5)


def test_map_at_5_repeats_count_once_but_keep_their_rank() -> None:
    # The repeated w_x takes ranks 1 and 2; the hit at rank 3 scores 1/3.
    assert _score5(["w_a"], ["w_x w_x w_a"]) == pytest.approx(1 / 3)
    # A hit repeated five times scores once, not five times.
    assert _score5(["w_a"], ["w_a w_a w_a w_a w_a"]) == 1.0
    # Repeats push the answer past rank 5.
    assert _score5(["w_a"], ["w_x w_x w_x w_x w_x w_a"]) == 0.0


def test_map_at_5_compares_labels_as_written() -> None:
    # Case, a leading zero and a double space (an empty label at rank 2) all matter.
    assert _score5(["36363"], ["036363 36363"]) == 0.5
    assert _score5(["new_whale"], ["New_Whale"]) == 0.0
    assert _score5(["36363"], ["1  36363"]) == pytest.approx(1 / 3)


def test_map_at_5_divides_by_at_most_five_relevant_items() -> None:
    many = " ".join(str(i) for i in range(8))
    assert _score5([many], ["0 1 2 3 4"]) == 1.0
    assert _score5(["a b"], ["a x b"]) == pytest.approx((1 + 2 / 3) / 2)

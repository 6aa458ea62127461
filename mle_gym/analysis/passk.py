"""pass@k and best-of-k: what a policy achieves when it gets k tries at a competition.

With n seeds of a competition of which c succeed, the unbiased estimate of the chance that at
least one of k tries (drawn without replacement from the n) succeeds is
1 - C(n - c, k) / C(n, k) (Chen et al. 2021). The expected best normalised score of k tries
is, with the n scores sorted ascending, sum_i score_(i) * C(i - 1, k - 1) / C(n, k): the i-th
smallest is the best of a k-subset exactly when the other k - 1 come from the i - 1 below it.
A split's figure is the mean over its competitions, as the paper's "pass@8" is.
"""

from __future__ import annotations

from math import comb
from typing import Any

from mle_gym.analysis.aggregate import RATES, RunSummary, competition_values
from mle_gym.runs.run import Run

#: The figures pass@k is given for (each a 1/0 per episode), then best-of-k's.
PASS_FIGURES = ("any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median")
BEST_OF = "normalized_score"


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k tries out of n, c of them successes, succeeds."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    return 1.0 - comb(n - c, k) / comb(n, k)


def best_of_k(values: list[float], k: int) -> float:
    """The expected maximum of k values drawn without replacement from `values`."""
    n = len(values)
    if not 1 <= k <= n:
        raise ValueError(f"best-of-k needs 1 <= k <= n (n={n}, k={k})")
    ordered = sorted(values)
    return sum(v * comb(i, k - 1) for i, v in enumerate(ordered)) / comb(n, k)


def parse_ks(text: str) -> list[int]:
    """`1,2,4,8` -> [1, 2, 4, 8]; each a whole number of at least 1."""
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(
            f"--pass-k takes whole numbers separated by commas, not {text!r}"
        ) from None
    if not ks or ks[0] < 1:
        raise ValueError(f"--pass-k takes whole numbers of at least 1, not {text!r}")
    return ks


def pass_table(run: Run, summary: RunSummary, ks: list[int]) -> dict[str, Any]:
    """Per competition {k: {figure: estimate}}, over its counted episodes under the summary's
    rule; per split row the mean over its competitions that have episodes (the others are
    named in "left_out"). Raises when a k exceeds a competition's episodes."""
    assert all(key in RATES for key in PASS_FIGURES)
    per_competition = {}
    for row in summary.competitions:
        episodes = list(competition_values(run, row.name, summary.rule).values())
        if not episodes:
            continue
        too_many = [k for k in ks if k > len(episodes)]
        if too_many:
            raise ValueError(
                f"pass@{too_many[0]} needs at least {too_many[0]} seeds, but {row.name} has "
                f"{len(episodes)} counted episode(s); ask for k <= {len(episodes)}"
            )
        per_competition[row.name] = {
            k: {
                **{
                    figure: pass_at_k(len(episodes), int(sum(e[figure] for e in episodes)), k)
                    for figure in PASS_FIGURES
                },
                f"best_{BEST_OF}": best_of_k([e[BEST_OF] for e in episodes], k),
            }
            for k in ks
        }
    per_split = {}
    for row in summary.splits:
        members = [c for c in row.competitions if c in per_competition]
        if members:
            per_split[row.name] = {
                "by_k": _mean_over(members, per_competition, ks),
                "left_out": [c for c in row.competitions if c not in per_competition],
            }
    return {"k": ks, "competitions": per_competition, "splits": per_split}


def _mean_over(
    members: list[str], per_competition: dict[str, Any], ks: list[int]
) -> dict[int, dict[str, float]]:
    return {
        k: {
            figure: sum(per_competition[c][k][figure] for c in members) / len(members)
            for figure in per_competition[members[0]][k]
        }
        for k in ks
    }

"""Grading time and peak memory of the segmentation and detection competitions at the size
of their real test sets.

    python benchmarks/grading_real_size.py [--only COMPETITION ...] [--scale 1.0] [--repeats 1]

The real answers stay private, so for each competition this writes synthetic answers in the
competition's private format (the files its `load_answers` or answers file reads) and a
valid submission for them, rows shuffled, both as large as the real test set:

- tgs-salt-identification-challenge: 1,000 masks of 101 x 101 (a quarter of 4,000);
- hubmap-kidney-segmentation: 3 slides of 0.8 to 3 gigapixels (the range of the real
  slides), 1,000 round glomeruli each (~300,000 runs per slide);
- uw-madison-gi-tract-image-segmentation: 40 scans of 144 slices, 3 organs (17,280 rows;
  our estimate of the real split's size), each organ an ellipsoid, so the 3D Hausdorff
  distance works on real-sized volumes;
- google-research-identify-contrails-reduce-global-warming: 1,856 records of 256 x 256;
- vesuvius-challenge-ink-detection: one 7,606 x 5,249 fragment, ink as ~5,000 blobs;
- kuzushiji-recognition: 389 pages with up to 350 characters each;
- vinbigdata-chest-xray-abnormalities-detection: 1,500 images, 30 predicted boxes each;
- siim-covid19-detection: 606 studies and 905 images;
- 3d-object-detection-for-autonomous-vehicles: 4,536 samples, 28 true and 30 predicted
  3D boxes each (the real train set has about 28 per sample).

Predictions are the answers with jitter, some dropped and some false ones added, so that
matching does real work and the score is neither 0 nor 1. Each case is written in a child
process, then graded in a fresh one with `grade_bounded`, as the env grades (validation and
metric in the bounded, forked grading child). "cold" is the first grade, which also builds
the competition's answer key in the private folder; "warm" is the median of the next
`--repeats` grades, which read it. Memory is the grading child's peak resident memory above
that of a fork that does nothing (so pages of the already imported libraries that a grade
touches, about 30 MiB, count too). The score is printed to show the submission graded as valid.
`--scale` shrinks every case to a fraction of its real size (counts of rows, or the area of
the few giant images) to try the script cheaply.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from grade_timing import run_child, time_grades

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

Runs = tuple["np.ndarray", "np.ndarray"]


def _count(real: int, scale: float) -> int:
    return max(1, round(real * scale))


def _ellipse_runs(
    minor_size: int,
    c_minor: np.ndarray,
    c_major: np.ndarray,
    r_minor: np.ndarray,
    r_major: np.ndarray,
) -> Runs:
    """1-based (starts, lengths) of filled ellipses, one run per line along the major axis.

    Pixels are numbered along the minor axis first: for column-major RLE (order "F") the
    minor axis is the rows and `minor_size` the height, for row-major ("C") the columns.
    The caller keeps the ellipses apart and inside the image.
    """
    import numpy as np

    r_major = np.asarray(r_major, dtype=np.int64)
    lines = 2 * r_major + 1
    which = np.repeat(np.arange(len(r_major)), lines)
    first = np.repeat(np.cumsum(lines) - lines, lines)
    offset = np.arange(len(which)) - first - r_major[which]
    ratio = 1.0 - (offset / np.maximum(r_major[which], 1)) ** 2
    half = np.floor(np.asarray(r_minor)[which] * np.sqrt(np.clip(ratio, 0, 1))).astype(np.int64)
    starts = (np.asarray(c_major)[which] + offset) * minor_size + np.asarray(c_minor)[which] - half
    order = np.argsort(starts, kind="stable")
    return starts[order] + 1, (2 * half + 1)[order]


def _rle(runs: Runs) -> str:
    import numpy as np

    return " ".join(map(str, np.column_stack(runs).ravel().tolist()))


def _blobs(
    minor: int, major: int, count: int, radius: int, rng: np.random.Generator
) -> tuple[str, str]:
    """(true, predicted) RLE of round blobs, each in its own cell of a grid: the prediction
    misses a tenth of the true blobs, adds a tenth of false ones and gets radii wrong."""
    cell = 2 * radius + 2
    rows, cols = minor // cell, major // cell
    count = min(count, rows * cols * 10 // 11)
    chosen = rng.choice(rows * cols, count + count // 10, replace=False)

    def runs(cells: np.ndarray) -> str:
        centre_minor = cells % rows * cell + radius + 1
        centre_major = cells // rows * cell + radius + 1
        radii = rng.integers(radius // 2, radius + 1, len(cells))
        return _rle(_ellipse_runs(minor, centre_minor, centre_major, radii, radii))

    return runs(chosen[:count]), runs(chosen[count // 10 :])


def _write(frame: pd.DataFrame, path: Path, shuffle: bool = False) -> None:
    if shuffle:
        frame = frame.sample(frac=1.0, random_state=1)
    frame.to_csv(path, index=False)


def _hex_ids(n: int, rng: np.random.Generator, width: int) -> list[str]:
    """`n` distinct random hexadecimal ids of `width` digits."""
    ids: dict[str, None] = {}
    while len(ids) < n:
        ids[rng.bytes((width + 1) // 2).hex()[:width]] = None
    return list(ids)


def tgs(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import numpy as np
    import pandas as pd

    n = _count(1000, scale)
    truth, guess = [], []
    for _ in range(n):
        salt, r = rng.random() < 0.6, int(rng.integers(8, 40))
        centre = rng.integers(r + 1, 100 - r, 2)
        truth.append(_rle(_ellipse_runs(101, [centre[0]], [centre[1]], [r], [r])) if salt else "")
        shifted = np.clip(centre + rng.integers(-3, 4, 2), r, 100 - r)  # stays inside
        found = salt if rng.random() < 0.85 else not salt
        guess.append(
            _rle(_ellipse_runs(101, [shifted[0]], [shifted[1]], [r], [r])) if found else ""
        )
    ids = _hex_ids(n, rng, 10)
    _write(pd.DataFrame({"id": ids, "rle_mask": truth}).sort_values("id"), private / "test.csv")
    _write(pd.DataFrame({"id": ids, "rle_mask": guess}), submission, shuffle=True)
    return n


def hubmap(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import pandas as pd

    side = math.sqrt(scale)
    shapes = [(38160, 42360), (31278, 25794), (46660, 63996)]
    ids = ["aaa6a05cc", "b2dc8411c", "e79de561c"]
    rows, truth, guess = [], [], []
    for (height, width), image_id in zip(shapes, ids, strict=True):
        height, width = max(500, round(height * side)), max(500, round(width * side))
        true_rle, guessed = _blobs(height, width, _count(1000, scale), 200, rng)
        rows.append((image_id, height, width))
        truth.append(true_rle)
        guess.append(guessed)
    answers = pd.DataFrame(rows, columns=["id", "height_pixels", "width_pixels"])
    answers.insert(1, "encoding", truth)
    _write(answers[["id", "encoding", "width_pixels", "height_pixels"]], private / "test.csv")
    _write(pd.DataFrame({"id": ids, "predicted": guess}), submission, shuffle=True)
    return len(ids)


def uw_madison(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import numpy as np
    import pandas as pd

    classes = ("large_bowel", "small_bowel", "stomach")
    depth = 144
    ids, names, truth, guess, sizes = [], [], [], [], []
    for scan in range(_count(40, scale)):
        size = 266 if scan % 4 else 310  # square slices keep the organ placement simple
        organs = []
        for _ in classes:
            radii = np.array([rng.integers(15, 40), rng.integers(20, 50), rng.integers(20, 50)])
            centre = np.array(
                [
                    rng.integers(radii[0], depth - radii[0]),
                    *rng.integers(radii[1:] + 6, size - radii[1:] - 6),  # room to move
                ]
            )
            organs.append((centre, radii, centre + rng.integers(-4, 5, 3)))
        for z in range(depth):
            for name, (centre, radii, moved) in zip(classes, organs, strict=True):
                cells = []
                for middle in (centre, moved):
                    fraction = 1 - ((z - middle[0]) / radii[0]) ** 2
                    if fraction <= 0:
                        cells.append("")
                        continue
                    r = np.maximum(np.floor(radii[1:] * math.sqrt(fraction)), 1).astype(int)
                    runs = _ellipse_runs(size, [middle[1]], [middle[2]], [r[0]], [r[1]])
                    cells.append(_rle(runs))
                ids.append(f"case{scan + 1}_day{scan % 7 + 1}_slice_{z + 1:04d}")
                names.append(name)
                truth.append(cells[0])
                guess.append(cells[1])
                sizes.append(float(size))
    answers = pd.DataFrame(
        {"id": ids, "class": names, "predicted": truth, "image_width": sizes, "image_height": sizes}
    )
    _write(answers, private / "test.csv")
    _write(answers[["id", "class"]].assign(predicted=guess), submission, shuffle=True)
    return len(ids)


def contrails(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import numpy as np
    import pandas as pd

    from mle_gym.formats.rle import encode_rle

    def rle(lines: list[tuple[int, int, int]]) -> str:
        image = np.zeros((256, 256), bool)
        for r, c, length in lines:
            image[r : r + 3, c : c + length] = True
        return encode_rle(image, order="F") or "-"

    n = _count(1856, scale)
    ids = [str(10**18 + 7919 * k) for k in rng.permutation(n).tolist()]
    truth, guess = [], []
    for _ in ids:  # thin line-shaped contrails in 40% of the records, '-' (none) elsewhere
        count = int(rng.integers(1, 6)) if rng.random() < 0.4 else 0
        lines = [
            (*rng.integers(0, 250, 2).tolist(), int(rng.integers(10, 200))) for _ in range(count)
        ]
        truth.append(rle(lines))
        seen = [
            (min(r + int(rng.integers(0, 2)), 252), c, length)
            for r, c, length in lines
            if rng.random() < 0.8
        ]
        if rng.random() < 0.1:
            seen.append((*rng.integers(0, 250, 2).tolist(), int(rng.integers(10, 200))))
        guess.append(rle(seen))
    answers = pd.DataFrame({"record_id": ids, "encoded_pixels": truth, "height": 256, "width": 256})
    _write(answers, private / "answers.csv")
    _write(pd.DataFrame({"record_id": ids, "encoded_pixels": guess}), submission, shuffle=True)
    return n


def vesuvius(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import pandas as pd

    side = math.sqrt(scale)
    height, width = max(200, round(7606 * side)), max(200, round(5249 * side))
    truth, guess = _blobs(width, height, _count(5000, scale), 24, rng)  # row-major: C order
    answers = pd.DataFrame(
        {"Id": ["a"], "Predicted": [truth], "width": [width], "height": [height]}
    )
    _write(answers, private / "inklabels_rle.csv")
    _write(answers[["Id", "Predicted"]], private / "gold_submission.csv")
    _write(pd.DataFrame({"Id": ["a"], "Predicted": [guess]}), submission)
    return 1


def kuzushiji(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import pandas as pd

    n = _count(389, scale)
    truth, guess = [], []
    for _ in range(n):
        boxes = int(rng.integers(1, 350))
        x, y = rng.integers(0, 2500, boxes), rng.integers(0, 3800, boxes)
        w, h = rng.integers(20, 120, boxes), rng.integers(20, 120, boxes)
        labels = [f"U+{c:04X}" for c in rng.integers(0x3000, 0x3000 + 800, boxes).tolist()]
        truth.append(
            " ".join(
                f"{c} {a} {b} {d} {e}" for c, a, b, d, e in zip(labels, x, y, w, h, strict=True)
            )
        )
        kept = rng.random(boxes) < 0.9
        points = [
            f"{c} {a + d / 2:.1f} {b + e / 2:.1f}"
            for c, a, b, d, e, k in zip(labels, x, y, w, h, kept, strict=True)
            if k
        ]
        points += [
            f"U+{int(rng.integers(0x3000, 0x3320)):04X} {int(rng.integers(0, 2600))} "
            f"{int(rng.integers(0, 3900))}"
            for _ in range(boxes // 5)
        ]
        guess.append(" ".join(points))
    ids = [f"{100000000 + k}_{k % 50:05d}_{k % 2 + 1}" for k in rng.permutation(n).tolist()]
    _write(pd.DataFrame({"image_id": ids, "labels": truth}), private / "test.csv")
    _write(pd.DataFrame({"image_id": ids, "labels": guess}), submission, shuffle=True)
    return sum(len(s.split()) // 3 for s in guess)


def vinbigdata(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import pandas as pd

    from mle_gym.competitions.catalog.vinbigdata_chest_xray_abnormalities_detection import (
        gold_submission,
    )

    n, per_image = _count(1500, scale), 30
    ids = _hex_ids(n, rng, 32)
    rows, cells = [], []
    for image_id in ids:
        found = [] if rng.random() < 0.43 else rng.choice(14, int(rng.integers(1, 6)), False)
        boxes = []
        for c in found:
            x0, y0 = rng.integers(0, 2000, 2)
            x1, y1 = x0 + int(rng.integers(50, 800)), y0 + int(rng.integers(50, 800))
            rows.append((image_id, int(c), float(x0), float(y0), float(x1), float(y1)))
            jitter = rng.integers(-30, 31, 4)
            boxes.append(
                (
                    int(c),
                    rng.random(),
                    x0 + jitter[0],
                    y0 + jitter[1],
                    max(x0 + jitter[0], x1 + jitter[2]),
                    max(y0 + jitter[1], y1 + jitter[3]),
                )
            )
        if not len(found):
            rows.append((image_id, 14, 0.0, 0.0, 1.0, 1.0))
        boxes.append((14, rng.random(), 0, 0, 1, 1))
        for _ in range(per_image - len(boxes)):
            x0, y0 = rng.integers(0, 2500, 2)
            size = rng.integers(20, 600, 2)
            boxes.append(
                (int(rng.integers(0, 14)), rng.random(), x0, y0, x0 + size[0], y0 + size[1])
            )
        cells.append(" ".join(f"{c} {p:.4f} {a} {b} {d} {e}" for c, p, a, b, d, e in boxes))
    answers = pd.DataFrame(
        rows, columns=["image_id", "class_id", "x_min", "y_min", "x_max", "y_max"]
    )
    answers = answers.sort_values(["image_id", "class_id"], kind="stable").reset_index(drop=True)
    _write(answers, private / "answers.csv")
    _write(gold_submission(answers), private / "gold_submission.csv")
    _write(pd.DataFrame({"image_id": ids, "PredictionString": cells}), submission, shuffle=True)
    return n * per_image


def siim(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import pandas as pd

    studies, images = _count(606, scale), _count(905, scale)
    labels = ("negative", "typical", "indeterminate", "atypical")
    ids, truth, guess = [], [], []
    for study in _hex_ids(studies, rng, 12):
        ids.append(f"{study}_study")
        truth.append(f"{labels[int(rng.integers(0, 4))]} 1 0 0 1 1")
        confidences = rng.dirichlet([1, 1, 1, 1])
        guess.append(
            " ".join(f"{k} {p:.4f} 0 0 1 1" for k, p in zip(labels, confidences, strict=True))
        )

    def box() -> tuple[int, ...]:
        x, y = rng.integers(0, 2500, 2)
        w, h = rng.integers(200, 1200, 2)
        return int(x), int(y), int(x + w), int(y + h)

    for image in _hex_ids(images, rng, 12):
        ids.append(f"{image}_image")
        opacities = [] if rng.random() < 0.45 else [box() for _ in range(rng.integers(1, 4))]
        found = " ".join(f"opacity 1 {a} {b} {c} {d}" for a, b, c, d in opacities)
        truth.append(found or "none 1 0 0 1 1")
        shift = int(rng.integers(-40, 41))
        predicted = [
            f"opacity {rng.random():.4f} {a + shift} {b + shift} {c + shift} {d + shift}"
            for a, b, c, d in opacities + [box() for _ in range(3)]
        ]
        predicted.append(f"none {rng.random():.4f} 0 0 1 1")
        guess.append(" ".join(predicted))
    _write(pd.DataFrame({"id": ids, "PredictionString": truth}), private / "test.csv")
    _write(pd.DataFrame({"id": ids, "PredictionString": guess}), submission, shuffle=True)
    return sum(len(s.split()) // 6 for s in guess)


def lyft(scale: float, rng: np.random.Generator, private: Path, submission: Path) -> int:
    import numpy as np
    import pandas as pd

    n, per_sample, extra = _count(4536, scale), 28, 2
    names = np.array(["car", "pedestrian", "truck", "bicycle", "other_vehicle", "bus"])
    boxes = n * per_sample
    truth = np.column_stack(
        [
            np.ones(boxes),
            rng.uniform(0, 2500, (boxes, 2)),
            rng.uniform(-20, -15, boxes),
            rng.uniform(0.5, 3, boxes),
            rng.uniform(1, 8, boxes),
            rng.uniform(1, 3, boxes),
            rng.uniform(-3, 3, boxes),
        ]
    ).reshape(n, per_sample, 8)
    kinds = rng.choice(names, (n, per_sample), p=[0.7, 0.15, 0.05, 0.04, 0.04, 0.02])
    guess = truth.copy()
    guess[..., 0] = rng.random((n, per_sample))
    guess[..., 1:3] += rng.normal(0, 0.3, (n, per_sample, 2))
    false = guess[:, :extra].copy()
    false[..., 1:3] += rng.uniform(20, 40, (n, extra, 2))
    guess = np.concatenate([guess, false], axis=1)
    guess_kinds = np.concatenate([kinds, kinds[:, :extra]], axis=1)

    def cells(values: np.ndarray, labels: np.ndarray, confidence: bool) -> list[str]:
        out = []
        for sample, sample_labels in zip(values, labels, strict=True):
            groups = []
            for (p, x, y, z, w, length, h, yaw), label in zip(sample, sample_labels, strict=True):
                head = f"{p:.4f} " if confidence else "1.0 "
                groups.append(
                    f"{head}{x:.3f} {y:.3f} {z:.3f} {w:.3f} {length:.3f} {h:.3f} {yaw:.4f} {label}"
                )
            out.append(" ".join(groups))
        return out

    ids = [rng.bytes(32).hex() for _ in range(n)]
    _write(
        pd.DataFrame({"Id": ids, "PredictionString": cells(truth, kinds, False)}),
        private / "test.csv",
    )
    _write(
        pd.DataFrame({"Id": ids, "PredictionString": cells(guess, guess_kinds, True)}),
        submission,
        shuffle=True,
    )
    return n * (per_sample + extra)


#: competition id -> (writer of private answers and a submission, what its count counts)
CASES: dict[str, tuple[Callable[[float, np.random.Generator, Path, Path], int], str]] = {
    "tgs-salt-identification-challenge": (tgs, "rows"),
    "hubmap-kidney-segmentation": (hubmap, "rows"),
    "uw-madison-gi-tract-image-segmentation": (uw_madison, "rows"),
    "google-research-identify-contrails-reduce-global-warming": (contrails, "rows"),
    "vesuvius-challenge-ink-detection": (vesuvius, "rows"),
    "kuzushiji-recognition": (kuzushiji, "points"),
    "vinbigdata-chest-xray-abnormalities-detection": (vinbigdata, "boxes"),
    "siim-covid19-detection": (siim, "boxes"),
    "3d-object-detection-for-autonomous-vehicles": (lyft, "boxes"),
}


def child_write(competition: str, scale: float, folder: Path) -> dict:
    """Written in its own child, so the grading child does not inherit this one's memory."""
    import numpy as np

    (folder / "private").mkdir(parents=True)
    write, _ = CASES[competition]
    count = write(scale, np.random.default_rng(0), folder / "private", folder / "submission.csv")
    return {"count": count, "bytes": (folder / "submission.csv").stat().st_size}


def measure(competition: str, scale: float, repeats: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mle-gym-real-size-") as tmp:
        folder = Path(tmp)
        try:
            written = run_child(__file__, "write", competition, str(scale), str(folder))
            graded = run_child(__file__, "grade", competition, str(folder), str(repeats))
        except RuntimeError as exc:
            print(f"{competition[:40]:<40} FAILED: {exc}", flush=True)
            return
    unit = CASES[competition][1]
    warm = "   -  " if graded["warm"] is None else f"{graded['warm']:6.2f}"
    outcome = (
        f"score {graded['score']:.5f}" if graded["error"] is None else f"INVALID: {graded['error']}"
    )
    print(
        f"{competition[:40]:<40} {written['count']:>10,} {unit:<6} "
        f"{written['bytes'] / 1e6:8.1f} MB | cold {graded['cold']:6.2f} s warm {warm} s | "
        f"+{graded['mib']:6.0f} MiB | {outcome}",
        flush=True,
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, competition, *rest = sys.argv[2:]
        if kind == "write":
            print(json.dumps(child_write(competition, float(rest[0]), Path(rest[1]))))
        else:
            print(json.dumps(time_grades(competition, Path(rest[0]), int(rest[1]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES))
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the real size")
    parser.add_argument("--repeats", type=int, default=1, help="warm grades after the cold one")
    args = parser.parse_args()
    print(f"scale {args.scale:g} of the real test sets; memory above the grading process")
    for competition in args.only or list(CASES):
        measure(competition, args.scale, args.repeats)


if __name__ == "__main__":
    main()

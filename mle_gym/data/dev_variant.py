"""The development variant: a split carved only from a competition's prepared public files.

Training on a competition without touching its test set needs a held-out part that is not the
test set. The variant is made from public/ alone (by default the competition's own `prepare`
applied to the public files as if they were raw), stored beside the main split as
`<cache>/<id>/dev/{public,private}`, and described by `dev/manifest.json`: the ids of both
parts, the md5 of every file, the rule and seed that made it. `check_dev_variant` is the proof
that it is clean: its ids come from the public training table and none is a real test id. A
variant that fails the check, or whose layout differs from the public test's, is never stored.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mle_gym.competitions.dev_ids import ids_in
from mle_gym.competitions.hardlink_helpers import link_or_copy
from mle_gym.competitions.registry import get_competition
from mle_gym.competitions.spec import Competition, IdsFn
from mle_gym.data.cache import CompetitionDirs, NotPrepared
from mle_gym.data.checksums import md5_of
from mle_gym.data.gate import prepare_lock, require_prepared

MANIFEST = "manifest.json"
#: The manifest's fields that say what a variant is (not when it was carved): its digest's.
CONTENT = ("competition", "rule", "seed", "made_from", "train_ids", "test_ids", "files")


class DevVariantUnavailable(RuntimeError):
    """The competition's public files cannot hold a development part, or carving it failed."""


class DevVariantLeak(DevVariantUnavailable):
    """A development variant's ids are not a clean split of the public training ids."""


@dataclass(frozen=True)
class DevDirs(CompetitionDirs):
    """`<cache>/<id>/dev`: public/ and private/ like a competition's, the manifest as marker."""

    @property
    def marker(self) -> Path:
        return self.root / MANIFEST

    @property
    def manifest(self) -> Path:
        return self.marker


def require_dev_variant(
    competition: str | Competition, root: Path | None = None, *, force: bool = False
) -> DevDirs:
    """The competition's development variant, carved on first use (once, under a lock).

    The main split must be prepared. A variant made from an older main preparation is carved
    again; `force` always carves again."""
    comp = get_competition(competition) if isinstance(competition, str) else competition
    check_offered(comp)
    main = require_prepared(comp.id, root=root)
    dev = DevDirs(main.root / "dev")
    with prepare_lock(main):  # one carving at a time, and none while the main split is made
        if not force and _current(dev, main):
            return dev
        carve(comp, main, dev)
    return dev


def check_offered(comp: Competition) -> None:
    """Raise `DevVariantUnavailable`, with the reason, for a competition whose public files
    cannot hold a development part (before anything is prepared for it)."""
    if comp.dev_variant.refused is not None:
        raise DevVariantUnavailable(
            f"{comp.id} has no development variant: {comp.dev_variant.refused}"
        )


def _current(dev: DevDirs, main: CompetitionDirs) -> bool:
    if not dev.is_prepared():
        return False
    made_from = dev.preparation_record().get("main_prepared_at")
    return made_from == main.preparation_record().get("prepared_at")


def carve(comp: Competition, main: CompetitionDirs, dev: DevDirs) -> None:
    """Make the variant in a staging folder, check it, then swap it in (manifest last)."""
    staging = Path(tempfile.mkdtemp(prefix=".dev-staging-", dir=main.root))
    try:
        as_raw = staging / "raw"
        out = DevDirs(staging / "dev")
        for folder in (as_raw, out.public, out.private):
            folder.mkdir(parents=True)
        _link_public(main.public, as_raw)
        missing = [name for name in comp.raw_files if not any(as_raw.glob(name))]
        if comp.dev_variant.prepare is None and missing:
            raise DevVariantUnavailable(
                f"{comp.id}: its public files do not have the layout of its raw files (no "
                f"{', '.join(missing)}), so its own prepare cannot carve a development split; "
                "it needs a development rule on its spec (Competition.dev_variant)"
            )
        split = comp.dev_variant.prepare or comp.prepare
        try:
            split(as_raw, out.public, out.private)
        except ModuleNotFoundError:
            raise  # an extra to install, named as preparing names it
        except Exception as exc:
            raise DevVariantUnavailable(
                f"carving the development variant of {comp.id} from its public files failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        shutil.rmtree(as_raw)
        check_layout(comp, main.public, out.public)
        ids = check_ids(comp, main, out)
        manifest = {
            "competition": comp.id,
            "rule": f"{split.__module__}.{split.__qualname__} applied to public/ as raw/",
            "seed": comp.dev_variant.seed,
            "made_from": "public",
            "main_prepared_at": main.preparation_record().get("prepared_at"),
            "created_at": datetime.now(UTC).isoformat(),
            "train_ids": sorted(ids.train),
            "test_ids": sorted(ids.test),
            "files": _md5s(out.root),
        }
        manifest["digest"] = content_digest(manifest)
        dev.manifest.unlink(missing_ok=True)
        shutil.rmtree(dev.root, ignore_errors=True)
        os.replace(out.root, dev.root)
        tmp = dev.root / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(manifest))  # no indent: the C encoder, for millions of ids
        os.replace(tmp, dev.manifest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _link_public(public: Path, into: Path) -> None:
    """The public files, hard-linked where possible: image sets run to many GB."""
    for entry in public.iterdir():
        if entry.is_dir():
            shutil.copytree(entry, into / entry.name, copy_function=link_or_copy)
        else:
            link_or_copy(entry, into / entry.name)


def _md5s(root: Path) -> dict[str, str]:
    """Every file's md5, but the manifest and hidden caches grading adds (answer keys)."""
    sums = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root)
        hidden = any(part.startswith(".") for part in name.parts)
        if path.is_file() and name.as_posix() != MANIFEST and not hidden:
            sums[name.as_posix()] = md5_of(path)
    return sums


def _header(path: Path) -> list[str]:
    with path.open(newline="") as handle:
        return next(csv.reader(handle), [])


def check_layout(comp: Competition, public: Path, dev_public: Path) -> None:
    """The dev public folder has the public folder's entries, and its CSVs the same columns."""
    names = sorted(p.name for p in public.iterdir())
    dev_names = sorted(p.name for p in dev_public.iterdir())
    if names != dev_names:
        raise DevVariantUnavailable(
            f"{comp.id}: the development public files {dev_names} differ from the public "
            f"files {names}; the variant needs a development rule on its spec"
        )
    for name in names:
        csv_file = name.endswith(".csv") and (public / name).is_file()
        if csv_file and _header(public / name) != _header(dev_public / name):
            raise DevVariantUnavailable(
                f"{comp.id}: development {name} has columns {_header(dev_public / name)}, "
                f"the public one {_header(public / name)}"
            )


@dataclass(frozen=True)
class DevIds:
    train: set[str]
    test: set[str]


def _read_ids(comp: Competition, reader: IdsFn, folder: Path, what: str) -> set[str]:
    """Ids by `reader`, a missing file or column said as the variant's problem."""
    try:
        return {str(v) for v in reader(folder)}
    except (OSError, KeyError, ValueError) as exc:
        raise DevVariantUnavailable(
            f"{comp.id}: the {what} ids cannot be read from {folder} ({type(exc).__name__}: "
            f"{exc}); the variant needs its id readers on its spec (Competition.dev_variant)"
        ) from exc


def _answer_ids(comp: Competition, private: Path) -> set[str]:
    fmt = comp.submission
    if fmt.load_answers is not None:
        return set(fmt.load_answers(private)[fmt.id_column].astype(str).tolist())
    return ids_in(fmt.answers_file, fmt.id_column)(private)


def _readers(comp: Competition) -> tuple[IdsFn, IdsFn]:
    rule = comp.dev_variant
    train = rule.train_ids or ids_in("train.csv", comp.submission.id_column)
    return train, rule.test_ids or (lambda private: _answer_ids(comp, private))


def check_ids(comp: Competition, main: CompetitionDirs, dev: CompetitionDirs) -> DevIds:
    """Raise `DevVariantLeak` unless the dev train and test ids are disjoint, both within the
    public training ids, and none of them a real test id (read from the real answers)."""
    train_ids, test_ids = _readers(comp)
    public_train = _read_ids(comp, train_ids, main.public, "public training")
    ids = DevIds(
        _read_ids(comp, train_ids, dev.public, "development training"),
        _read_ids(comp, test_ids, dev.private, "development test"),
    )
    problems = []
    if both := ids.train & ids.test:
        problems.append(f"{len(both)} id(s) in both the dev train and dev test parts")
    if outside := (ids.train | ids.test) - public_train:
        problems.append(f"{len(outside)} dev id(s) not among the public training ids")
    if real := (ids.train | ids.test) & _read_ids(comp, test_ids, main.private, "real test"):
        problems.append(f"{len(real)} dev id(s) are real test ids")
    if problems:
        example = sorted(both or outside or real)[:3]
        raise DevVariantLeak(f"{comp.id}: {'; '.join(problems)} (e.g. {example})")
    return ids


def content_digest(manifest: dict) -> str:
    """What a variant is, as one sha256 over its rule, seed, ids and files' md5: carving is
    deterministic, so two carvings of the same split have the same digest whenever they were
    made, and an edited or differently carved variant has another."""
    body = json.dumps({key: manifest.get(key) for key in CONTENT}, sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def variant_record(dev: DevDirs) -> dict[str, str]:
    """Which stored variant an episode uses, for its integrity record: the md5 of its manifest
    (this very carving) and its content digest (the same split, however often carved)."""
    raw = dev.manifest.read_bytes()
    manifest = json.loads(raw)
    return {
        "manifest_md5": hashlib.md5(raw).hexdigest(),
        "digest": manifest.get("digest") or content_digest(manifest),
    }


def dev_dirs(competition_id: str, root: Path | None = None) -> DevDirs:
    """Where the competition's development variant is stored (whether or not it is)."""
    return DevDirs(CompetitionDirs.of(competition_id, root).root / "dev")


def check_dev_variant(competition: str | Competition, root: Path | None = None) -> dict:
    """Check a stored variant against its manifest and the real split; return the manifest.

    Raises `DevVariantLeak` when an id check fails or a file differs from its recorded md5."""
    comp = get_competition(competition) if isinstance(competition, str) else competition
    main = CompetitionDirs.of(comp.id, root)
    dev = dev_dirs(comp.id, root)
    if not dev.is_prepared():
        raise NotPrepared(f"{comp.id} has no development variant in {dev.root}")
    manifest = dev.preparation_record()
    ids = check_ids(comp, main, dev)
    if ids.train != set(manifest["train_ids"]) or ids.test != set(manifest["test_ids"]):
        raise DevVariantLeak(f"{comp.id}: the development ids differ from its manifest's")
    files = _md5s(dev.root)
    if files != manifest["files"]:
        changed = sorted(set(files.items()) ^ set(manifest["files"].items()))[:3]
        raise DevVariantLeak(f"{comp.id}: development files differ from the manifest: {changed}")
    return manifest

"""Turns raw Kaggle files into the public/private split, atomically and verified.

A run works in a staging directory and writes the `prepared.json` marker last, so an
interrupted run never leaves a competition that looks prepared.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from mle_gym.competitions.hardlink_helpers import link_or_copy
from mle_gym.competitions.prepare_progress import reporting_to
from mle_gym.competitions.spec import Competition
from mle_gym.data import kaggle_download
from mle_gym.data.cache import CompetitionDirs
from mle_gym.data.checksums import Mismatch, verify
from mle_gym.data.kaggle_download import ProgressFn
from mle_gym.extras import install_hint

Log = Callable[[str], None]


class ChecksumError(RuntimeError):
    """Prepared files differ from MLE-bench's (raised only with strict=True)."""


@dataclass
class PrepareResult:
    dirs: CompetitionDirs
    mismatches: list[Mismatch] = field(default_factory=list)
    #: Whether MLE-bench checksums exist for this competition at all.
    checked: bool = False
    reused: bool = False


def _raw_complete(comp: Competition, raw: Path) -> bool:
    return raw.is_dir() and all(any(raw.glob(name)) for name in comp.raw_files)


def _unpack_download(comp: Competition, folder: Path) -> None:
    """Unpack Kaggle's competition archive (`<id>.zip`) in place, one level only.

    MLE-bench's raw directory is that archive unpacked; archives inside it (train.zip, ...)
    stay as they are, because each competition's prepare reads them itself.
    """
    archive = folder / f"{comp.id}.zip"
    if archive.is_file() and not _raw_complete(comp, folder):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(folder)
        archive.unlink()


def _download(
    comp: Competition, dirs: CompetitionDirs, log: Log, on_progress: ProgressFn | None
) -> Path:
    """The competition's Kaggle archive, in a directory kept until it is unpacked, so that an
    interrupted download resumes on the next run."""
    if not kaggle_download.credentials_present():
        raise kaggle_download.KaggleUnavailable(kaggle_download.how_to_get_data(comp.id))
    size = kaggle_download.listed_size(comp.id)
    shown = f" ({size / 1e9:,.2f} GB of files)" if size else ""
    log(f"downloading {comp.id} from Kaggle{shown}; an interrupted download resumes when rerun")
    return kaggle_download.download(comp.id, dirs.download, size, on_progress)


def _missing_message(comp: Competition, staging: Path, source: Path | None) -> str:
    """Every raw file (or pattern) prepare reads that is absent, and what it expects."""
    missing = [n for n in comp.raw_files if not any(staging.glob(n))]
    where = str(source) if source is not None else "the download"
    return (
        f"{where} lacks {len(missing)} of the {len(comp.raw_files)} raw file(s) that "
        f"preparing {comp.id} reads: {', '.join(missing)} (paths relative to the folder "
        "or zip, as in Kaggle's archive of the competition)"
    )


def _fill_raw(
    comp: Competition,
    dirs: CompetitionDirs,
    source: Path | None,
    log: Log,
    on_progress: ProgressFn | None,
) -> None:
    staging = Path(tempfile.mkdtemp(prefix=".raw-", dir=dirs.root))
    try:
        if source is not None:
            if source.is_file() and zipfile.is_zipfile(source):
                log(f"extracting {source}")
                with zipfile.ZipFile(source) as zf:
                    zf.extractall(staging)
            elif source.is_dir():
                # hard links where the file system allows: raw sets run to hundreds of GB
                log(f"linking (or copying) raw files from {source}")
                shutil.copytree(
                    source, staging, dirs_exist_ok=True, symlinks=False, copy_function=link_or_copy
                )
            else:
                raise FileNotFoundError(f"--raw must be a directory or a zip file: {source}")
        elif comp.fetch_raw is not None:
            log(f"building the raw files of {comp.id} from its bundled source")
            comp.fetch_raw(staging)
        else:
            archive = _download(comp, dirs, log, on_progress)
            log(f"extracting {archive.name}")
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(staging)
        _unpack_download(comp, staging)
        if not _raw_complete(comp, staging):
            raise FileNotFoundError(_missing_message(comp, staging, source))
        shutil.rmtree(dirs.raw, ignore_errors=True)
        os.replace(staging, dirs.raw)
        shutil.rmtree(dirs.download, ignore_errors=True)  # unpacked into raw/ now
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_marker(dirs: CompetitionDirs, result: PrepareResult) -> None:
    record = {
        "prepared_at": datetime.now(UTC).isoformat(),
        "checksums_checked": result.checked,
        "mismatches": [str(m) for m in result.mismatches],
    }
    tmp = dirs.root / f".{dirs.marker.name}.{uuid.uuid4().hex}"
    tmp.write_text(json.dumps(record, indent=2))
    os.replace(tmp, dirs.marker)


def prepare(
    comp: Competition,
    source: Path | None = None,
    *,
    strict: bool = False,
    force: bool = False,
    root: Path | None = None,
    log: Log = lambda _msg: None,
    on_progress: ProgressFn | None = None,
) -> PrepareResult:
    """Prepare `comp` into the cache (reusing a finished preparation unless `force`)."""
    dirs = CompetitionDirs.of(comp.id, root)
    if dirs.is_prepared() and not force and source is None:
        record = dirs.preparation_record()
        return PrepareResult(dirs, checked=record.get("checksums_checked", False), reused=True)
    created = not dirs.root.exists()
    dirs.root.mkdir(parents=True, exist_ok=True)
    try:
        return _prepare_in(comp, dirs, source, strict, log, on_progress)
    except BaseException:
        # A failed first preparation leaves no empty <id>/ that would look half-prepared
        # (a partial Kaggle download in it is kept: the next run resumes it).
        if created and dirs.root.is_dir() and not any(dirs.root.iterdir()):
            dirs.root.rmdir()
        raise


def _prepare_in(
    comp: Competition,
    dirs: CompetitionDirs,
    source: Path | None,
    strict: bool,
    log: Log,
    on_progress: ProgressFn | None,
) -> PrepareResult:
    if source is not None or not _raw_complete(comp, dirs.raw):
        _fill_raw(comp, dirs, source, log, on_progress)

    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=dirs.root))
    try:
        (staging / "public").mkdir()
        (staging / "private").mkdir()
        log(f"splitting {comp.id} into public and private files")
        with reporting_to(log):
            try:
                comp.prepare(dirs.raw, staging / "public", staging / "private")
            except ModuleNotFoundError as exc:
                hint = install_hint(exc)
                if hint is None:
                    raise
                raise ModuleNotFoundError(
                    f"preparing {comp.id} needs the package {exc.name!r}: {hint}", name=exc.name
                ) from exc
        result = PrepareResult(dirs, checked=bool(comp.checksums.public or comp.checksums.private))
        result.mismatches = verify(staging / "public", staging / "private", comp.checksums)
        if result.mismatches and strict:
            raise ChecksumError(
                f"{comp.id}: prepared files differ from MLE-bench's:\n  "
                + "\n  ".join(map(str, result.mismatches))
            )
        dirs.marker.unlink(missing_ok=True)
        for name in ("public", "private"):
            shutil.rmtree(dirs.root / name, ignore_errors=True)
            os.replace(staging / name, dirs.root / name)
        _write_marker(dirs, result)
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)

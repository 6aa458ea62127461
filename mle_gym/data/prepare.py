"""Turns raw Kaggle files into the public/private split, atomically and verified.

A run works in staging directories (raw files, then the split) and swaps them in only once
everything succeeded: the split, the checksums (with `strict`) and the caller's check of the
answers (`check_private`, e.g. that grading can key them). The `prepared.json` marker is
written last, so an interrupted run never leaves a competition that looks prepared, and a
failed run leaves an existing preparation as it was. Raw files that are damaged (a truncated
zip or CSV, a missing column) and a full disk fail with a `PrepareError` that says so.
"""

from __future__ import annotations

import errno
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


class PrepareError(RuntimeError):
    """The raw files could not be made into a preparation; the message says why and what to
    do. An existing preparation is left as it was."""


class AlreadyPrepared(PrepareError):
    """Given raw files for a competition that is prepared, without `force`."""


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
) -> Path:
    """The raw files, in a staging folder under the competition's root (the caller moves it
    into place, or removes it)."""
    staging = Path(tempfile.mkdtemp(prefix=".raw-", dir=dirs.root))
    try:
        if source is not None:
            if source.is_file() and (source.suffix.lower() == ".zip" or zipfile.is_zipfile(source)):
                log(f"extracting {source}")
                _extract(source, staging)
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
            _extract(archive, staging)
        _unpack_download(comp, staging)
        if not _raw_complete(comp, staging):
            raise FileNotFoundError(_missing_message(comp, staging, source))
        return staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _extract(archive: Path, into: Path) -> None:
    """Unpack a zip, saying plainly when it is not whole (a download cut short)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(into)
    except (zipfile.BadZipFile, EOFError) as exc:
        raise PrepareError(
            f"{archive} is not a whole zip archive ({exc}): it is likely truncated (an "
            "interrupted download or copy); fetch it again"
        ) from exc


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
    check_private: Callable[[Path], None] | None = None,
) -> PrepareResult:
    """Prepare `comp` into the cache (reusing a finished preparation unless `force`).

    `source` (raw files) for a prepared competition needs `force`: a preparation is never
    replaced by accident. `check_private(private_dir)` runs on the new answers before they
    are swapped in; whatever it raises fails the preparation (grading passes its answer-key
    build, so answers it could not key never replace good ones)."""
    dirs = CompetitionDirs.of(comp.id, root)
    if dirs.is_prepared() and not force:
        if source is None:
            record = dirs.preparation_record()
            return PrepareResult(dirs, checked=record.get("checksums_checked", False), reused=True)
        raise AlreadyPrepared(
            f"{comp.id} is already prepared in {dirs.root}; add --force (force=True) to "
            f"replace it with the files in {source} (the current preparation is kept if the "
            "new one fails)"
        )
    created = not dirs.root.exists()
    try:
        dirs.root.mkdir(parents=True, exist_ok=True)
        return _prepare_in(comp, dirs, source, strict, log, on_progress, check_private)
    except OSError as exc:
        if _disk_full(exc):
            raise PrepareError(
                f"disk full: preparing {comp.id} in {dirs.root} ran out of space ({exc}); free "
                "some (or set MLE_GYM_HOME to a larger disk) and run it again. " + _kept(dirs)
            ) from exc
        raise
    finally:
        # A failed first preparation leaves no empty <id>/ that would look half-prepared
        # (a partial Kaggle download in it is kept: the next run resumes it).
        if created and dirs.root.is_dir() and not any(dirs.root.iterdir()):
            dirs.root.rmdir()


def _disk_full(exc: OSError) -> bool:
    """Out of space or quota, also when a tree copy gathered it among its errors."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    failures = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else []
    full = (f"[Errno {errno.ENOSPC}]", f"[Errno {errno.EDQUOT}]")
    return isinstance(failures, list) and any(
        any(code in str(failure) for code in full) for failure in failures
    )


def _kept(dirs: CompetitionDirs) -> str:
    return "The existing preparation was kept." if dirs.is_prepared() else "Nothing was prepared."


def _prepare_in(
    comp: Competition,
    dirs: CompetitionDirs,
    source: Path | None,
    strict: bool,
    log: Log,
    on_progress: ProgressFn | None,
    check_private: Callable[[Path], None] | None,
) -> PrepareResult:
    new_raw: Path | None = None
    if source is not None or not _raw_complete(comp, dirs.raw):
        new_raw = _fill_raw(comp, dirs, source, log, on_progress)
        if not dirs.is_prepared():  # nothing to keep: the raw files stay for a rerun
            _swap_in(new_raw, dirs.raw)
            shutil.rmtree(dirs.download, ignore_errors=True)  # unpacked into raw/ now
            new_raw = None
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=dirs.root))
    try:
        (staging / "public").mkdir()
        (staging / "private").mkdir()
        log(f"splitting {comp.id} into public and private files")
        _split(comp, new_raw or dirs.raw, staging, dirs, log)
        result = PrepareResult(dirs, checked=bool(comp.checksums.public or comp.checksums.private))
        result.mismatches = verify(staging / "public", staging / "private", comp.checksums)
        if result.mismatches and strict:
            raise ChecksumError(
                f"{comp.id}: prepared files differ from MLE-bench's:\n  "
                + "\n  ".join(map(str, result.mismatches))
                + f"\n{_kept(dirs)}"
            )
        if check_private is not None:
            try:
                check_private(staging / "private")
            except Exception as exc:
                raise PrepareError(
                    f"the answers prepared for {comp.id} cannot be used for grading: {exc}. "
                    f"The raw files are likely damaged (truncated or altered). {_kept(dirs)}"
                ) from exc
        dirs.marker.unlink(missing_ok=True)
        if new_raw is not None:
            _swap_in(new_raw, dirs.raw)
            shutil.rmtree(dirs.download, ignore_errors=True)
        for name in ("public", "private"):
            _swap_in(staging / name, dirs.root / name)
        _write_marker(dirs, result)
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if new_raw is not None:
            shutil.rmtree(new_raw, ignore_errors=True)


def _swap_in(new: Path, place: Path) -> None:
    shutil.rmtree(place, ignore_errors=True)
    os.replace(new, place)


def _split(comp: Competition, raw: Path, staging: Path, dirs: CompetitionDirs, log: Log) -> None:
    """The competition's own split, its failures on damaged raw files said plainly."""
    try:
        with reporting_to(log):
            comp.prepare(raw, staging / "public", staging / "private")
    except ModuleNotFoundError as exc:
        hint = install_hint(exc)
        if hint is None:
            raise
        raise ModuleNotFoundError(
            f"preparing {comp.id} needs the package {exc.name!r}: {hint}", name=exc.name
        ) from exc
    except KeyError as exc:
        raise PrepareError(
            f"preparing {comp.id} failed: a raw file lacks the column (or entry) {exc}. Are "
            f"these Kaggle's files of {comp.id}, whole and unaltered? {_kept(dirs)}"
        ) from exc
    except (ValueError, IndexError, zipfile.BadZipFile, EOFError) as exc:
        raise PrepareError(
            f"preparing {comp.id} failed on its raw files: {type(exc).__name__}: {exc}. Are "
            f"these Kaggle's files of {comp.id}, whole and unaltered? {_kept(dirs)}"
        ) from exc

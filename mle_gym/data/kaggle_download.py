"""Downloads a competition's raw files with the user's own Kaggle credentials.

The archive goes to a directory that survives an interruption: the Kaggle client resumes a
partial download there (HTTP range requests) when the command is run again. Progress is
reported by watching the file grow, so the caller can draw it however it likes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Called with (bytes downloaded so far, expected total or None).
ProgressFn = Callable[[int, int | None], None]


class KaggleUnavailable(RuntimeError):
    """The Kaggle API cannot be used here; the message says what to do instead."""


def credentials_present() -> bool:
    if os.environ.get("KAGGLE_USERNAME") and os.environ.get("KAGGLE_KEY"):
        return True
    config_dir = Path(os.environ.get("KAGGLE_CONFIG_DIR", Path.home() / ".kaggle"))
    return (config_dir / "kaggle.json").is_file()


def how_to_get_data(competition_id: str) -> str:
    return (
        f"No Kaggle credentials were found, so the data of {competition_id!r} cannot be "
        "downloaded.\n"
        "  1. Create an API token at https://www.kaggle.com/settings (API > Create New Token) "
        "and save it as ~/.kaggle/kaggle.json, or set KAGGLE_USERNAME and KAGGLE_KEY.\n"
        f"  2. Accept the competition's rules at https://www.kaggle.com/competitions/"
        f"{competition_id}/rules (Kaggle refuses downloads until you do).\n"
        "  3. Install the extra: pip install 'mle-gym[kaggle]'.\n"
        f"Or, if you already have the files: mle-gym prepare {competition_id} --raw DIR_OR_ZIP"
    )


def _api() -> Any:
    if not credentials_present():
        raise KaggleUnavailable("no Kaggle credentials; see `mle-gym prepare --help`")
    try:
        from kaggle.api.kaggle_api_extended import KaggleApi
    except ImportError:
        raise KaggleUnavailable(
            "The `kaggle` package is not installed: pip install 'mle-gym[kaggle]'"
        ) from None
    api = KaggleApi()
    api.authenticate()
    return api


def _explain(competition_id: str, exc: Exception) -> Exception:
    text = str(exc)
    if "403" in text or "Forbidden" in text:
        return KaggleUnavailable(
            f"Kaggle refused {competition_id!r} (403). Accept the rules at "
            f"https://www.kaggle.com/competitions/{competition_id}/rules and try again."
        )
    if "404" in text or "Not Found" in text:
        return KaggleUnavailable(f"Kaggle has no competition {competition_id!r} (404)")
    return exc


def listed_size(competition_id: str) -> int | None:
    """Total size of the competition's files as Kaggle lists them (None if unknown)."""
    api = _api()
    total, token = 0, None
    try:
        while True:
            page = api.competition_list_files(competition_id, page_token=token, page_size=200)
            total += sum(int(getattr(f, "total_bytes", 0) or 0) for f in page.files)
            token = getattr(page, "next_page_token", None)
            if not token:
                return total or None
    except Exception as exc:  # the client raises its own HTTP errors; say what they mean
        raise _explain(competition_id, exc) from exc


class _GrowthWatcher:
    """Reports the size of the files in a directory every half second while it grows."""

    def __init__(self, folder: Path, total: int | None, report: ProgressFn) -> None:
        self.folder, self.total, self.report = folder, total, report
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _size(self) -> int:
        return sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            self.report(self._size(), self.total)

    def __enter__(self) -> _GrowthWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.report(self._size(), self.total)


def download(
    competition_id: str,
    dest: Path,
    total: int | None = None,
    on_progress: ProgressFn | None = None,
) -> Path:
    """Download (or resume downloading) the competition's zip into `dest`; return its path."""
    if not credentials_present():
        raise KaggleUnavailable(how_to_get_data(competition_id))
    api = _api()
    dest.mkdir(parents=True, exist_ok=True)
    watcher = _GrowthWatcher(dest, total, on_progress or (lambda _done, _total: None))
    try:
        with watcher:
            api.competition_download_files(competition_id, path=str(dest), force=False, quiet=True)
    except Exception as exc:
        raise _explain(competition_id, exc) from exc
    archive = dest / f"{competition_id}.zip"
    if not archive.is_file():
        raise KaggleUnavailable(f"the Kaggle download of {competition_id!r} produced no zip file")
    return archive

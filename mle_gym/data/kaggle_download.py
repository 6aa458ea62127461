"""Downloads a competition's raw files with the user's own Kaggle credentials."""

from __future__ import annotations

import os
from pathlib import Path


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


def download(competition_id: str, dest: Path) -> Path:
    """Download the competition's zip into `dest` and return its path."""
    if not credentials_present():
        raise KaggleUnavailable(how_to_get_data(competition_id))
    try:
        from kaggle.api.kaggle_api_extended import KaggleApi
    except ImportError:
        raise KaggleUnavailable(
            "The `kaggle` package is not installed: pip install 'mle-gym[kaggle]'"
        ) from None
    api = KaggleApi()
    api.authenticate()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        api.competition_download_files(competition_id, path=str(dest), quiet=False)
    except Exception as exc:  # the client raises its own HTTP errors; say what they mean
        text = str(exc)
        if "403" in text or "Forbidden" in text:
            raise KaggleUnavailable(
                f"Kaggle refused the download of {competition_id!r} (403). Accept the rules at "
                f"https://www.kaggle.com/competitions/{competition_id}/rules and try again."
            ) from exc
        raise
    zips = sorted(dest.glob("*.zip"))
    if not zips:
        raise KaggleUnavailable(f"the Kaggle download of {competition_id!r} produced no zip file")
    return zips[0]

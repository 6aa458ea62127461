"""Public notebooks of a competition, for the plagiarism audit: MLE-bench lists the most
popular ones per competition (`kernels.txt`, one `owner/slug` a line); they are downloaded
with the user's own Kaggle credentials, like the data."""

from __future__ import annotations

from pathlib import Path

from mle_gym.data.kaggle_download import KaggleUnavailable, _api, credentials_present


def kernel_refs(lists: Path, competition_id: str) -> list[str]:
    """The `owner/slug` refs MLE-bench lists for `competition_id` under `lists`: an
    MLE-bench checkout's `mlebench/competitions` folder (or one holding <id>/kernels.txt)."""
    for candidate in (
        lists / competition_id / "kernels.txt",
        lists / "mlebench" / "competitions" / competition_id / "kernels.txt",
    ):
        if candidate.is_file():
            lines = (line.strip() for line in candidate.read_text().splitlines())
            return [line for line in lines if line and not line.startswith("#")]
    raise FileNotFoundError(f"no kernels.txt for {competition_id} under {lists}")


def how_to_fetch(competition_id: str, refs: list[str], out: Path) -> str:
    return (
        f"No Kaggle credentials were found, so the {len(refs)} notebooks MLE-bench lists for "
        f"{competition_id!r} cannot be downloaded.\n"
        "  1. Create an API token at https://www.kaggle.com/settings (API > Create New Token) "
        "and save it as ~/.kaggle/kaggle.json, or set KAGGLE_USERNAME and KAGGLE_KEY.\n"
        "  2. Install the extra: pip install 'mle-gym[kaggle]'.\n"
        f"  3. Run this command again; or by hand: kaggle kernels pull OWNER/SLUG -p "
        f"{out / competition_id} for each line of its kernels.txt."
    )


def fetch_kernels(refs: list[str], dest: Path) -> list[str]:
    """Download each notebook (its source: .py or .ipynb) into `dest`; the refs that failed."""
    if not credentials_present():
        raise KaggleUnavailable("no Kaggle credentials")
    api = _api()
    dest.mkdir(parents=True, exist_ok=True)
    failed = []
    for ref in refs:
        try:
            api.kernels_pull(ref, path=str(dest))
        except Exception:  # a notebook withdrawn from Kaggle: the others still count
            failed.append(ref)
    return failed

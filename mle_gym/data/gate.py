"""The prepared-data gate: what every user of a competition's data (envs, grading, batches,
reports, exports) passes before touching public/ or private/.

Competitions whose raw files ship with a dependency prepare themselves here on first use,
under a lock per competition, so several processes sharing a cache (a batch's workers)
prepare it once; any other unprepared competition stops with one message saying how to
prepare it. Code that only asks whether data is there uses `CompetitionDirs.is_prepared`.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from mle_gym.competitions import get_competition
from mle_gym.data.cache import CompetitionDirs, NotPrepared
from mle_gym.data.prepare import Log, prepare


def require_prepared(
    competition_id: str,
    *,
    auto: bool = True,
    root: Path | None = None,
    log: Log = lambda _msg: None,
) -> CompetitionDirs:
    """The competition's prepared cache directories. With `auto`, one with bundled raw
    files is prepared now (once, whoever else asks at the same moment); otherwise, or when
    its raw files must come from Kaggle, `NotPrepared` says how to prepare it."""
    comp = get_competition(competition_id)
    dirs = CompetitionDirs.of(comp.id, root)
    if dirs.is_prepared():
        return dirs
    if auto and comp.fetch_raw is not None:
        with prepare_lock(dirs):
            return prepare(comp, root=root, log=log).dirs  # reused if another finished it
    raise NotPrepared(not_prepared_message([comp.id], dirs.root.parent))


def require_all_prepared(
    competition_ids: Sequence[str], *, auto: bool = True, root: Path | None = None
) -> list[CompetitionDirs]:
    """`require_prepared` for each; those missing are named together in one error, so a
    batch fails before it starts, listing everything to prepare."""
    ready, missing = [], []
    for competition_id in competition_ids:
        try:
            ready.append(require_prepared(competition_id, auto=auto, root=root))
        except NotPrepared:
            missing.append(get_competition(competition_id).id)
    if missing:
        where = CompetitionDirs.of(missing[0], root).root.parent
        raise NotPrepared(not_prepared_message(missing, where))
    return ready


def not_prepared_message(competition_ids: Sequence[str], where: Path) -> str:
    """The one way mle_gym says data is missing, and how to prepare it."""
    several = len(competition_ids) > 1
    return (
        f"{', '.join(competition_ids)} {'are' if several else 'is'} not prepared in {where}: run "
        f"`mle-gym prepare {' '.join(competition_ids)}` (with Kaggle credentials), or "
        f"`mle-gym prepare {'ID' if several else competition_ids[0]} --raw DIR_OR_ZIP` with "
        f"the raw files you have{' for each' if several else ''}"
    )


@contextmanager
def prepare_lock(dirs: CompetitionDirs) -> Iterator[None]:
    """Held while preparing one competition: beside its folder, which preparing creates."""
    path = dirs.root.parent / f".{dirs.root.name}.prepare.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield

"""Zip members stamped with a fixed time, so that an archive written twice from the same files
has the same bytes: a development variant is carved twice to the same md5 sums, and a
member's time of writing would differ between carvings."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

#: The earliest time a zip can store, as the fields a zip member's time has.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
#: The same time (1980-01-01 UTC) in seconds, for the other archives prepares write (7z and
#: tar members, gzip headers).
FIXED_TIME = 315532800


def fixed_member(name: str, compress_type: int = zipfile.ZIP_STORED) -> zipfile.ZipInfo:
    """A member `name` stamped ZIP_TIME, readable by all (as a file written by us would be)."""
    member = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    member.compress_type = compress_type
    member.external_attr = 0o644 << 16
    return member


def add_file(archive: zipfile.ZipFile, path: Path, name: str, compress_type: int) -> None:
    """Copy the file `path` into `archive` as `name` (streamed, zip64 when it is large)."""
    member = fixed_member(name, compress_type)
    member.file_size = path.stat().st_size
    with path.open("rb") as source, archive.open(member, "w") as target:
        shutil.copyfileobj(source, target, 1 << 20)

"""Files on the driver's own disk, written whole (no pyspark): a page-level
model root there (pagelevel/model.py) and the manifests and LATEST files of an
output on local disk (tables/output.py RunOutput.replace_text)."""

from __future__ import annotations

import os
import uuid


def replace_text(path: str, text: str) -> None:
    """PATH written whole: a temporary file of this writer's own beside it,
    then os.replace, atomic on POSIX: a reader sees the old text or the new,
    never none, and a failed write leaves the old one. Hadoop's local file
    system keeps a checksum beside each file it writes (.NAME.crc); the old
    one goes first, so Hadoop then reads the new text unverified instead of
    failing its check (its own rename with OVERWRITE deletes the old file, then
    renames: not atomic)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        crc = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.crc")
        if os.path.exists(crc):
            os.remove(crc)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)

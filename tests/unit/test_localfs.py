"""localfs.replace_text: a file on the driver's disk written whole."""

import os

from templatemine import localfs


def test_replace_text_swaps_the_file_whole_and_drops_hadoops_stale_checksum(tmp_path):
    """Hadoop's local file system keeps .NAME.crc beside what it wrote; after the
    text is replaced, an old checksum would fail Hadoop's next read (and its own
    rename with OVERWRITE deletes the old file first: not atomic, found in review)."""
    path = tmp_path / "sub" / "manifest.json"
    localfs.replace_text(str(path), "one")
    (tmp_path / "sub" / ".manifest.json.crc").write_bytes(b"crc of one")
    localfs.replace_text(str(path), "two")
    assert path.read_text() == "two" and sorted(os.listdir(tmp_path / "sub")) == ["manifest.json"]

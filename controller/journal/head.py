"""The journal's head file: how far the journal has reached, kept apart from the database.

`journal.head` beside `journal.sqlite3` holds the last sequence number written, the hash chain's
value over every entry up to it, and when. It is written (and fsync'd) after each entry commits,
so a database that comes back with fewer entries (a deleted or damaged `-wal` file, a copy restored
from an older backup) or with different ones is caught at start instead of starting healthy.

The file is two fixed slots written in turn, each with its own CRC: a write torn by a power cut
damages only the slot being written, and the other still says where the journal was one entry
before. Its size never changes, so writing it needs no free space on a full disk.
"""

from __future__ import annotations

import json
import os
import weakref
import zlib
from dataclasses import dataclass
from pathlib import Path

SLOT = 256


@dataclass(frozen=True)
class HeadMark:
    seq: int
    hash: str
    at: str


class HeadFile:
    """`journal.head`: read the newest good slot; write the next one and make it durable.

    head = HeadFile(state_dir / "journal.head")
    head.write(HeadMark(12, "9f0c...", "2026-12-01T08:00:00.000Z"))
    head.read()   # -> HeadMark(12, ...) or None when there is no head file yet
    """

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        self._fd: int | None = None

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> HeadMark | None:
        """The newest slot whose CRC is good; None when there is no head file. A file with no
        good slot at all is reported as damaged (ValueError)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        marks = [m for m in (_decode(data[i : i + SLOT]) for i in (0, SLOT)) if m is not None]
        if not marks:
            if not data.strip(b"\0"):
                return None  # created, never written (the first entry had not committed)
            raise ValueError(f"{self.path}: neither slot of the head file is readable")
        return max(marks, key=lambda m: m.seq)

    def write(self, mark: HeadMark, *, fsync: bool = True) -> None:
        """Write `mark` into the slot it takes (seq odd or even) and fsync it (`fsync=False`: left to
        the next write that is fsync'd, which makes the whole file durable)."""
        if self.readonly:
            raise OSError(f"{self.path}: opened read-only")
        fd = self._open()
        text = json.dumps({"seq": mark.seq, "hash": mark.hash, "at": mark.at}, separators=(",", ":"))
        line = f"{text}\x1f{zlib.crc32(text.encode()):08x}\n".encode()
        os.pwrite(fd, line.ljust(SLOT, b"\0"), (mark.seq % 2) * SLOT)
        if fsync:
            # The slot overwrites blocks the file has had since its creation (both slots written
            # and fsync'd then, with its directory): its size and extents never change, so
            # fdatasync makes it durable without the inode's times, which would commit the file
            # system's journal on every entry (ext4: about 0.7 commits a card with fsync).
            os.fdatasync(fd)

    def _open(self) -> int:
        if self._fd is None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            if os.fstat(fd).st_size < 2 * SLOT:  # both slots allocated once, at creation
                os.fchmod(fd, 0o600)  # the owner's alone, whatever the umask
                os.pwrite(fd, b"\0" * (2 * SLOT), 0)
                os.fsync(fd)
                _fsync_dir(self.path.parent)
            self._fd = fd
            # A head file dropped without close() (a journal no one closed) gives its descriptor back.
            self._closer = weakref.finalize(self, os.close, fd)
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            self._closer.detach()
            os.close(self._fd)
            self._fd = None


def _decode(slot: bytes) -> HeadMark | None:
    text, sep, crc = slot.rstrip(b"\0").rstrip(b"\n").decode("utf-8", "replace").rpartition("\x1f")
    if not sep or f"{zlib.crc32(text.encode()):08x}" != crc:
        return None
    try:
        doc = json.loads(text)
        return HeadMark(int(doc["seq"]), str(doc["hash"]), str(doc["at"]))
    except (ValueError, KeyError, TypeError):
        return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

"""Retention: rounds older than the configured age leave the live journal for the archive.

The live journal keeps the last `state.retain_days` days; older rounds are exported, whole, to
the archive (`state.archive_dir`, default `<state dir>/archive`): one directory per export, named
by its first and last sequence numbers, holding every entry with the hash chain's value after it
(`entries.jsonl.gz`), each round as recall shows it, with its round file (`rounds.jsonl.gz`), and
a manifest. Only after the export is on disk (fsync'd) and has been read back and checked against
the journal's own hash chain are the entries removed from the live journal. Nothing is removed
that the floor store has not confirmed (the journal meta `floor.confirmed`, issue 18), nor the
entries the last two snapshots need, so the table still starts by checking its last snapshot.

`tablectl recall --archive DIR` reads the rounds back; `--round N --export F` writes a round file
that `tablectl replay` settles.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from controller.journal.log import Journal, JournalCorrupt, JournalError, link


@dataclass(frozen=True)
class Retained:
    """What one retention pass did: entries up to `through` exported to `directory` (None and
    `why` when nothing was due or allowed)."""

    through: int
    rounds: tuple[int, int] | None
    directory: Path | None
    why: str


#: At most this many entries leave in one pass, so a pass between two rounds stays short (the
#: daemon runs one at start and then every few minutes while the table waits for a round).
PASS_ENTRIES = 2000


def retain(
    journal: Journal, archive_dir: Path, *, days: float, floor_required: bool, most: int | None = PASS_ENTRIES
) -> Retained:
    """Export and remove the rounds that ended more than `days` ago (see the module's words),
    at most `most` entries in this pass (None: all that are due)."""
    first, chain_before = journal.retained()
    if days <= 0:
        return Retained(first, None, None, "retention is off (state.retain_days = 0)")
    snapshots = journal.snapshots(2)
    if len(snapshots) < 2:
        return Retained(first, None, None, "too few rounds yet")
    limit = snapshots[0].seq  # the older of the last two snapshots stays checkable
    floor = journal.floor_confirmed()
    if floor_required or floor is not None:
        limit = min(limit, floor or 0)
    if most is not None:
        limit = min(limit, first + most)
    before = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    point = journal.retention_point(before, limit)
    if point is None or point[1] <= first:
        why = f"nothing older than {days:g} days"
        if floor_required and (floor or 0) < snapshots[0].seq:
            why += f" that the floor has confirmed (it has confirmed up to entry {floor or 0})"
        return Retained(first, None, None, why)
    last_round, cut = point
    directory = _export(journal, archive_dir, first, chain_before, cut, last_round)
    journal.retire(cut, _check_export(directory), last_round)
    manifest = json.loads((directory / "manifest.json").read_text())
    return Retained(cut, tuple(manifest["rounds"]) if manifest["rounds"] else None, directory, "exported")


def _export(journal: Journal, archive_dir: Path, first: int, chain: str, cut: int, last_round: int) -> Path:
    name = f"{first + 1:012d}-{cut:012d}"
    final = archive_dir / name
    if final.exists():
        raise JournalError(f"{final}: an export of these entries is already there; check it and move it away")
    work = archive_dir / f".{name}.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rounds: list[int] = []
    with gzip.open(work / "entries.jsonl.gz", "wt", encoding="utf-8") as out:
        for entry in journal.entries(after=first, upto=cut):
            text = json.dumps(entry.body, separators=(",", ":"), sort_keys=True)
            chain = link(chain, entry.seq, entry.at, entry.round, entry.kind, text)
            out.write(json.dumps({**entry.to_json(), "chain": chain}, separators=(",", ":")) + "\n")
    with gzip.open(work / "rounds.jsonl.gz", "wt", encoding="utf-8") as out:
        for number in journal.indexed_rounds(through_seq=cut):
            record = journal.round_record(number)
            if record is not None and number <= last_round:
                rounds.append(number)
                out.write(json.dumps(record, separators=(",", ":")) + "\n")
    manifest = {
        "entries": [first + 1, cut],
        "chain_before": journal.retained()[1],
        "chain_through": chain,
        "rounds": [rounds[0], rounds[-1]] if rounds else [],
        "round_count": len(rounds),
        "files": {p.name: _sha256(p) for p in sorted(work.iterdir())},
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (work / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for part in work.iterdir():
        _fsync(part)
    _fsync(work)
    os.rename(work, final)
    _fsync(archive_dir)
    if chain != journal.chain_through(cut):
        raise JournalCorrupt(f"{final}: the export does not match the journal's hash chain; nothing was removed")
    return final


def _check_export(directory: Path) -> str:
    """Read an export back: every file as written, every entry in order, the chain as recorded."""
    manifest = json.loads((directory / "manifest.json").read_text())
    for name, digest in manifest["files"].items():
        if _sha256(directory / name) != digest:
            raise JournalCorrupt(f"{directory / name}: the export reads back different; nothing was removed")
    chain, expected = manifest["chain_before"], manifest["entries"][0]
    for entry in _lines(directory / "entries.jsonl.gz"):
        text = json.dumps(entry["body"], separators=(",", ":"), sort_keys=True)
        chain = link(chain, entry["seq"], entry["at"], entry["round"], entry["kind"], text)
        if entry["seq"] != expected or entry["chain"] != chain:
            raise JournalCorrupt(f"{directory}: entry {expected} reads back wrong; nothing was removed")
        expected += 1
    if expected - 1 != manifest["entries"][1] or chain != manifest["chain_through"]:
        raise JournalCorrupt(f"{directory}: the export is incomplete; nothing was removed")
    return str(chain)


def archived_rounds(archive_dir: Path) -> Iterator[dict[str, Any]]:
    """Every round in the archive, oldest first (each export's directory checked as it is read)."""
    if not archive_dir.is_dir():
        raise JournalError(f"{archive_dir}: there is no archive here")
    for directory in sorted(p for p in archive_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        manifest = json.loads((directory / "manifest.json").read_text())
        path = directory / "rounds.jsonl.gz"
        if _sha256(path) != manifest["files"]["rounds.jsonl.gz"]:
            raise JournalCorrupt(f"{path}: the archived rounds do not match their manifest")
        yield from _lines(path)


def archive_size(archive_dir: Path) -> int:
    if not archive_dir.is_dir():
        return 0
    return sum(p.stat().st_size for p in archive_dir.rglob("*") if p.is_file())


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

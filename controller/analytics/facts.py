"""What the table's loop tells the analytics before they read its journal (one cheap command,
controller/api/commands.py's `journal_facts`): where the journal is, and the rounds the table
ended since its last snapshot (not in the round index yet)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.table import Table


@dataclass(frozen=True)
class Facts:
    """The journal's file, and the rounds the table ended since its last snapshot: the seq that
    ended each, and each one's record."""

    path: Path
    ends: dict[int, int]
    records: dict[int, dict[str, Any]]


def journal_facts(table: Table) -> Facts:
    """On the table's loop, cheap (a few rounds at most)."""
    recent = table.now.rounds
    ends = {n: seq for n in recent.numbers() if (seq := recent.ended_at(n)) is not None}
    return Facts(table.journal.path, ends, {n: recent[n].record_json() for n in ends})

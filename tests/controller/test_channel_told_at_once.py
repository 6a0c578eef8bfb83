"""The table's side of the channel (controller/api/channel.py's `TableServer`) tells the API's
process of an entry within the entry's own telling, in one write: the live feed's message when a
screen listens (it says the table's new version), else a "changed"; a device's change (no entry)
is told at the end of the loop's turn, as before. Nothing of an entry waits for another turn of
the table's loop (the card's path: journal, lamps, display, the API told, the shoe's ACK)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from controller.api.channel import HEADER, TableServer, frame_length, unframed
from controller.api.side import table_side
from controller.journal.log import Journal
from controller.table import Table


class Channel:
    """The table's end of the channel, as the server writes to it: each write's frames, decoded."""

    def __init__(self) -> None:
        self.writes: list[list[Any]] = []
        self.transport = self

    def write(self, data: bytes) -> None:
        frames, at = [], 0
        while at < len(data):
            (word,) = HEADER.unpack_from(data, at)
            size = frame_length(word)
            frames.append(unframed(word, data[at + HEADER.size : at + HEADER.size + size]))
            at += HEADER.size + size
        self.writes.append(frames)

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def kinds(self) -> list[list[str]]:
        return [[message[0] for message in frames] for frames in self.writes]


def _served(tmp_path: Path) -> tuple[Table, TableServer, Channel]:
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    gate = table_side(table, asyncio.get_running_loop())
    assert gate.commands.feed is not None
    server = TableServer(gate, gate.commands.feed, gate.devices)
    channel = Channel()
    server._writer = channel  # type: ignore[assignment]  # what serve() sets from the socket
    return table, server, channel


def test_an_entry_is_told_to_the_api_before_the_table_returns_to_its_loop(tmp_path: Path) -> None:
    async def scenario() -> None:
        table, server, channel = _served(tmp_path)
        login = {"user": "dealer", "ok": True}
        # Nobody listens to the feed: a "changed" with the table's version, written at once.
        table.access("login", login)
        assert channel.kinds() == [["changed"]]
        assert channel.writes[0][0][1] == server.gate.version
        # A screen listens: the feed's message says it (its view's version), and nothing else.
        server.source.count = 1
        table.access("login", login)
        assert channel.kinds() == [["changed"], ["feed"]]
        assert channel.writes[1][0][3][0] == server.gate.version  # its Told, as its fields: the version first
        await asyncio.sleep(0)  # a turn of the loop later: nothing more was due
        await asyncio.sleep(0)
        assert channel.kinds() == [["changed"], ["feed"]]
        # A device's change (no entry, no feed message while it is held back) is told at the end
        # of the loop's turn, as it always was.
        server.source.count = 0
        table.device_status("camera", {"ok": False, "error": "unplugged"})
        assert channel.kinds() == [["changed"], ["feed"]]
        await asyncio.sleep(0)
        assert channel.kinds() == [["changed"], ["feed"], ["changed"]]
        assert channel.writes[2][0][1] == server.gate.version

    asyncio.run(scenario())

"""The channel between the table's process and the API's (controller/api/remote.py), in one test
process: the table and its side (TableServer) on a loop in a thread named "table", the app over a
RemoteGate on the test's loop, spoken to with httpx through ASGI. What crosses is only named
commands and plain data: a request opens a round, reads it back, is refused in the table's words,
a wrong token is journaled by the table's loop; a name that is not a command runs nothing; and once
the table's side is gone, every request is a 503 in words, never a 500 nor a hang."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from controller.api import channel
from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.channel import TableServer, read_frame
from controller.api.live import LiveFeed
from controller.api.remote import RemoteGate
from controller.api.runtime import Runtime
from controller.api.side import table_side
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
ROUND = {"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": None}


class TableProcess:
    """The table's side as the daemon's process has it: its own loop in a thread named "table"."""

    def __init__(self, path: Path) -> None:
        self.journal = Journal(path)
        self.table = Table(self.journal, game="grand-slam", rules={}, simulated=True)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="table", daemon=True)
        self.thread.start()
        self.gate = table_side(self.table, self.loop)
        assert self.gate.commands.feed is not None
        self.server = TableServer(self.gate, self.gate.commands.feed, self.gate.devices)
        self.writers: list[str] = []
        append = self.journal.append

        def noted(*args: Any, **kwargs: Any) -> Any:
            self.writers.append(threading.current_thread().name)
            return append(*args, **kwargs)

        self.journal.append = noted  # type: ignore[method-assign]

    def serve(self, sock: socket.socket) -> Any:
        settings = {
            "adapter": self.table.adapter,
            "game_name": self.table.game_name,
            "table_id": self.table.table_id,
            "simulated": True,
            "seats": self.table.seats,
            "controls": sorted(self.gate.controls),
        }
        return asyncio.run_coroutine_threadsafe(self.server.serve(sock, settings), self.loop)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[TableProcess]:
    side = TableProcess(tmp_path / "j.sqlite3")
    yield side
    side.close()


async def _api(sock: socket.socket) -> tuple[httpx.AsyncClient, RemoteGate, asyncio.Task[None]]:
    reader, writer = await asyncio.open_unix_connection(sock=sock)
    start = await read_frame(reader)
    assert start is not None and start[0] == "start"
    live = LiveFeed()
    gate = RemoteGate(reader, writer, start[1], live)
    running = asyncio.create_task(gate.run())
    app = create_app(Runtime(tokens=Tokens(DEALER, SUPERVISOR), gate=gate, live=live))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://table")
    return client, gate, running


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_requests_reach_the_table_only_as_named_commands_run_on_its_loop(table: TableProcess) -> None:
    ours, theirs = socket.socketpair()
    served = table.serve(ours)

    async def scenario() -> None:
        client, gate, running = await _api(theirs)
        async with client:
            opened = await client.post("/api/rounds", json=ROUND, headers=_auth(DEALER))
            assert opened.status_code == 201, opened.text
            number = opened.json()["round"]
            state = (await client.get("/api/state", headers=_auth(DEALER))).json()
            assert state["round"] == number and state["round_status"] == "open"
            # A refusal keeps the table's kind and words across the channel.
            again = await client.post("/api/rounds", json=ROUND, headers=_auth(DEALER))
            assert again.status_code == 409 and "still being dealt" in again.json()["error"], again.text
            wrong = await client.get("/api/state", headers=_auth("not-a-token-at-all-0123"))
            assert wrong.status_code == 401
            recalled = (await client.get("/api/rounds?last=1", headers=_auth(SUPERVISOR))).json()["rounds"]
            assert [r["round"] for r in recalled] == [number]
            # Nothing but the table's commands runs on its side, whatever name comes over.
            for name in ("find", "forget", "_record", "__init__", "nothing"):
                with pytest.raises(LookupError):
                    await gate.command(name)
        gate.close()
        running.cancel()

    asyncio.run(scenario())
    served.result(30)  # the table's side saw the channel end
    assert table.writers and set(table.writers) == {"table"}, table.writers
    kinds = [e.kind for e in table.journal.entries(after=0)]
    assert "round-open" in kinds and "login" in kinds, kinds


def test_while_screens_listen_the_state_read_is_the_feeds_not_a_job_on_the_table(table: TableProcess) -> None:
    """With a screen on the live feed, each entry's message carries the view beside its changes:
    GET /api/state answers from it (the table as a fresh view of it reads, no job on the table's
    loop and no round trip); with nobody listening, the API asks the table as before."""
    publish = table.gate.publish
    asked: list[int] = []

    def counted(t: Table) -> Any:
        asked.append(1)
        return publish(t)

    table.gate.publish = counted  # type: ignore[method-assign]
    ours, theirs = socket.socketpair()
    served = table.serve(ours)

    async def fresh() -> dict[str, Any]:
        return await asyncio.wrap_future(table.gate.submit(lambda t: publish(t).whole))

    async def scenario() -> None:
        client, gate, running = await _api(theirs)
        async with client:
            screen = gate._live.subscribe("dealer")  # a screen listens (told to the table first)
            opened = await client.post("/api/rounds", json=ROUND, headers=_auth(DEALER))
            assert opened.status_code == 201, opened.text
            before = len(asked)  # the view before the round (no message yet) was asked for
            state = (await client.get("/api/state", headers=_auth(DEALER))).json()
            assert state["round"] == 1 and state["prompt"] == "Deal to seat 1, first base"
            assert state == await fresh() and len(asked) == before
            gate._live.unsubscribe(screen)  # nobody listens: the table is asked again
            voided = await client.post("/api/rounds/current/void", json={"reason": "test"}, headers=_auth(SUPERVISOR))
            assert voided.status_code == 200, voided.text
            assert (await client.get("/api/state", headers=_auth(DEALER))).json() == await fresh()
            assert len(asked) == before + 1
        gate.close()
        running.cancel()

    asyncio.run(scenario())
    served.result(30)


def test_feed_messages_the_api_missed_are_made_good_with_the_whole_state(
    table: TableProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API's process falls behind and the table drops live messages (their changes are lost):
    its screens are told to reconnect, and the next message carries the whole state, so the
    feed's state, and the reads made from it, are the table's again."""
    ours, theirs = socket.socketpair()
    served = table.serve(ours)

    async def fresh() -> dict[str, Any]:
        return await asyncio.wrap_future(table.gate.submit(lambda t: table.gate.publish(t).whole))

    async def scenario() -> None:
        client, gate, running = await _api(theirs)
        async with client:
            screen = gate._live.subscribe("supervisor")
            monkeypatch.setattr(channel, "FEED_BACKLOG_LIMIT", -1)  # every message is dropped
            opened = await client.post("/api/rounds", json=ROUND, headers=_auth(DEALER))
            assert opened.status_code == 201, opened.text
            monkeypatch.setattr(channel, "FEED_BACKLOG_LIMIT", 16 * 1024 * 1024)
            voided = await client.post("/api/rounds/current/void", json={"reason": "test"}, headers=_auth(SUPERVISOR))
            assert voided.status_code == 200, voided.text
            queued = [screen.queue.get_nowait() for _ in range(screen.queue.qsize())]
            assert queued[-1] is None  # the screen was told to reconnect (it catches up from its seq)
            assert gate._live.whole == await fresh()
            assert (await client.get("/api/state", headers=_auth(SUPERVISOR))).json() == await fresh()
        gate.close()
        running.cancel()

    asyncio.run(scenario())
    served.result(30)


def test_without_the_table_every_request_is_a_503_in_words(table: TableProcess) -> None:
    ours, theirs = socket.socketpair()
    served = table.serve(ours)

    async def scenario() -> None:
        client, gate, running = await _api(theirs)
        async with client:
            assert (await client.get("/api/health")).status_code == 200
            served.cancel()  # the daemon's side goes away (its end of the channel closes)
            await asyncio.wait_for(gate.closed.wait(), 30)
            for method, path, token in (
                ("GET", "/api/health", None),
                ("GET", "/api/state", DEALER),
                ("POST", "/api/confirm", DEALER),
                ("GET", "/api/rounds", SUPERVISOR),
            ):
                headers = {**(_auth(token) if token else {}), "Content-Type": "application/json"}
                answer = await client.request(method, path, headers=headers, content=b"{}")
                assert answer.status_code == 503, (path, answer.status_code, answer.text)
                assert answer.json()["kind"] == "unavailable" and answer.json()["error"]
        running.cancel()

    asyncio.run(scenario())


def test_screens_polling_recall_cost_the_table_one_job_a_change(tmp_path: Path) -> None:
    """GET /api/rounds asked again and again between two changes of the table is answered from
    what the table said last: twenty polls, one recall on the table's loop; after the table
    changes, the next poll asks it again and shows the change."""
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR))
    commands = rt.gate.commands  # type: ignore[attr-defined]  # the table's side, in this process
    recalled = commands.recalled
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return recalled(*args, **kwargs)

    commands.recalled = counted
    with TestClient(create_app(rt)) as client:
        first = [client.get("/api/rounds?last=5", headers=_auth(SUPERVISOR)).json() for _ in range(20)]
        assert len(calls) == 1 and all(answer == first[0] for answer in first)
        assert first[0]["rounds"] == []
        assert client.post("/api/rounds", json=ROUND, headers=_auth(DEALER)).status_code == 201
        after = client.get("/api/rounds?last=5", headers=_auth(SUPERVISOR)).json()
        assert len(calls) == 2 and [r["round"] for r in after["rounds"]] == [1]
        # Another audience (the dealer's sight) is its own answer.
        client.get("/api/rounds?last=5", headers=_auth(DEALER))
        assert len(calls) == 3
    rt.gate.close()

"""The floor loses nothing when the broker crashes: real daemons dealing about 20 entries a second,
a real Mosquitto (persistence on, as hardware/floor.md says) SIGKILLed and restarted, a daemon
SIGKILLed during the outage, and the floor store's consumer SIGKILLed too, so that it is away when
the broker returns and the tables push their backlog. At the end the store holds every journal
entry of every table exactly once, in order, and `tablectl floor export --check` agrees.

The outage is a few seconds, not the 45 s of the field report: what the broker forgets on a
SIGKILL (every session and queue since its last autosave) is the same either way."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from controller.adapters.floor.catchup import STORED_KEY
from controller.adapters.floor.publisher import MARK_KEY
from controller.floor.store import open_store
from controller.journal.log import Journal

from .conftest import Mosquitto, free_port, wait_until

REPO = Path(__file__).resolve().parents[2]
SITE = "outage"
TOKENS = {"TABLECTL_DEALER_TOKEN": "outage-dealer-token-0123456789", "TABLECTL_SUPERVISOR_TOKEN": "outage-super-0123456789"}


class Daemon:
    """`tablectl run --sim [--demo]` on its own state directory, publishing to the broker."""

    def __init__(self, home: Path, table_id: str, broker_port: int) -> None:
        self.home = home
        self.table_id = table_id
        home.mkdir(parents=True, exist_ok=True)
        self.config = home / "table.toml"
        self.config.write_text(
            f'[table]\nid = "{table_id}"\n[floor]\nbroker = "mqtt://127.0.0.1:{broker_port}"\nsite = "{SITE}"\n'
        )
        self.journal = home / "state" / "journal.sqlite3"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, demo: bool) -> None:
        self.spawn(demo)
        self.ready()

    def spawn(self, demo: bool) -> None:
        port = self.port = free_port()
        argv = [sys.executable, "-m", "controller.cli", "run", "--sim", "--config", str(self.config),
                "--state-dir", str(self.home / "state"), "--http", f"127.0.0.1:{port}", "--seed", str(self.starts)]  # fmt: skip
        if demo:
            argv += ["--demo", "--demo-interval", "0.05"]  # about 20 entries a second
        self.starts += 1
        log = (self.home / f"daemon-{self.starts}.log").open("wb")
        self.process = subprocess.Popen(argv, cwd=REPO, stdout=log, stderr=log, env={**os.environ, **TOKENS})

    def ready(self) -> None:
        """Wait until its API answers (the table loop, the journal and the publisher are up)."""
        assert self.process is not None
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/health", timeout=1).close()
                return
            except OSError:
                assert self.process.poll() is None, f"the daemon {self.table_id} exited at start"
                assert time.monotonic() < deadline, f"the daemon {self.table_id} did not start"
                time.sleep(0.05)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()
        self.process = None

    def stop(self) -> None:
        self.terminate()
        self.wait()

    def terminate(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)

    def wait(self) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def entries(self) -> list[dict[str, object]]:
        journal = Journal(self.journal, readonly=True)
        try:
            return [e.to_json() for e in journal.entries()]
        finally:
            journal.close()

    def acked_mark(self) -> int:
        journal = Journal(self.journal, readonly=True)
        try:
            return int(journal.get_meta(MARK_KEY) or 0)
        finally:
            journal.close()

    def stored_mark(self) -> dict[str, int]:
        journal = Journal(self.journal, readonly=True)
        try:
            return dict(json.loads(journal.get_meta(STORED_KEY) or "{}"))
        finally:
            journal.close()


class Consumer:
    """`tablectl floor --broker URL --store URL` as a process."""

    def __init__(self, home: Path, broker_port: int, store_url: str) -> None:
        self.home = home
        self.argv = [sys.executable, "-m", "controller.cli", "floor", "--broker", f"mqtt://127.0.0.1:{broker_port}",
                     "--store", store_url, "--consumer-id", "floor-store", "--probe", "1"]  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = (self.home / f"consumer-{self.starts}.log").open("wb")
        self.process = subprocess.Popen(self.argv, cwd=REPO, stdout=log, stderr=log)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            try:
                assert self.process.wait(timeout=20) == 0
            finally:
                if self.process.poll() is None:
                    self.process.kill()
                    self.process.wait()
            self.process = None

    def logs(self) -> str:
        return "".join(p.read_text() for p in sorted(self.home.glob("consumer-*.log")))


def _stored(url: str, table: str) -> list[dict[str, object]]:
    store = open_store(url)
    try:
        return [r.to_json()["entry"] for r in store.entries(SITE, table)]
    finally:
        store.close()


@pytest.mark.slow
def test_a_broker_killed_mid_shift_with_a_daemon_and_the_consumer_killed_too_loses_nothing(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    consumer = Consumer(tmp_path, mosquitto.port, url)
    tables = [Daemon(tmp_path / name, name, mosquitto.port) for name in ("GS-01", "GS-02")]
    try:
        consumer.start()
        for t in tables:
            t.spawn(demo=True)
        for t in tables:
            t.ready()
        assert wait_until(lambda: all(len(_stored(url, t.table_id)) >= 5 for t in tables), 30, 0.1)

        mosquitto.kill()  # it loses every session and queue since its last autosave
        time.sleep(0.5)
        tables[0].kill()  # a power cut at a table while the floor is down
        tables[0].start(demo=True)
        consumer.kill()  # and the store's consumer dies too
        mosquitto.start()
        # The tables reconnect and push their backlog while the consumer is still away: the broker
        # acknowledges it all (their floor.acked marks pass it) and keeps none of it for the store.
        backlog = {t.table_id: len(t.entries()) for t in tables}
        assert wait_until(lambda: all(t.acked_mark() >= backlog[t.table_id] for t in tables), 30, 0.1)
        consumer.start()
        time.sleep(0.5)

        # The shift ends: each table stops dealing (a clean stop), then runs on without the demo
        # dealer, so its journal is final and it still answers the floor.
        for t in tables:
            t.terminate()
        for t in tables:
            t.wait()
            t.spawn(demo=False)
        for t in tables:
            t.ready()
        final = {t.table_id: t.entries() for t in tables}
        assert wait_until(lambda: all(_stored(url, t.table_id) == final[t.table_id] for t in tables), 30, 0.2)
        store = open_store(url)
        store_id = store.store_id
        store.close()
        # Each table now knows the store holds everything: its floor-confirmed mark is at its end.
        assert wait_until(lambda: all(t.stored_mark().get(store_id) == len(final[t.table_id]) for t in tables), 15)

        check = [sys.executable, "-m", "controller.cli", "floor", "export", "--store", url, "--check",
                 "--broker", f"mqtt://127.0.0.1:{mosquitto.port}", "--table"]  # fmt: skip
        running = [subprocess.Popen([*check, t.table_id], cwd=REPO, stdout=subprocess.PIPE, text=True) for t in tables]
        checks = [(p.communicate(timeout=30)[0], p.returncode) for p in running]
    finally:
        consumer.stop()
        for t in tables:
            t.stop()

    for t, (said, code) in zip(tables, checks, strict=True):
        n = len(final[t.table_id])
        assert code == 0, said
        assert said == f"{SITE}/{t.table_id}: the table says its journal ends at {n}; the store holds {n} of {n}: complete\n"
    assert min(len(v) for v in final.values()) > 60
    # The consumer had to ask the tables: the broker had lost what it had acknowledged to them.
    assert re.search(r"sent (1 entry|\d+ entries) the store lacked", consumer.logs()) and "entr(ies)" not in consumer.logs()

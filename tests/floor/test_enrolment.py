"""A table's signing key is enrolled on the floor, never learned from the feed (issue 31).

A real Mosquitto and floor store: the store accepts a table's signed chain heads only under the
key an operator enrolled for it with `tablectl floor enroll` (the fingerprint `tablectl verify`
prints on the table, or its table.pub); a head under a key not enrolled is a floor alert naming
the table and the key's fingerprint, and a new key is an explicit re-enrolment, kept with the
ones before it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.floor.store import EnrolmentRefused, open_store
from controller.security.chainhead import fingerprint, public_hex, table_key

from .conftest import SITE, Mosquitto, deal_rounds, floor_config, make_consumer, make_publisher, make_table, wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def broker(mosquitto_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    server = Mosquitto(mosquitto_bin, tmp_path_factory.mktemp("broker"))
    server.start()
    yield server
    server.stop()


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip


def test_heads_count_only_under_the_enrolled_key_and_a_new_key_is_an_explicit_re_enrolment(
    broker: Mosquitto, tmp_path: Path
) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    table = make_table(tmp_path / "state")
    key = table_key(tmp_path / "state" / "table.key")
    first = fingerprint(public_hex(key))
    consumer = make_consumer(broker.broker, url)
    publisher = make_publisher(floor_config(broker.broker), table)
    publisher.start()
    store = open_store(url)
    try:
        deal_rounds(table, 1)
        head = table.sign_head(key)
        # Not enrolled: the store does not take the key from the head it is sent with.
        assert wait_until(lambda: bool(store.alerts(SITE, "GS-01")))
        assert store.alerts(SITE, "GS-01") == [(head.seq, (
            "table GS-01 has no key enrolled on the floor: its chain head is signed by key "
            f"{first}. If that is the table's own key (`tablectl verify` on the table prints it), enrol it: "
            f"tablectl floor enroll --table GS-01 --key {first}"))]  # fmt: skip
        assert store.history(SITE, "GS-01")["seq"] == head.seq - 1  # checked no further than that head

        # The operator enrols the table's table.pub: the check goes on at once, through the head.
        done = tablectl("floor", "enroll", "--store", url, "--site", SITE, "--table", "GS-01",
                        "--key", str(tmp_path / "state" / "table.pub"), "--by", "alice")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"{SITE}/GS-01: key {first} enrolled (enrolment 1, by alice)" in done.stdout
        assert f"{SITE}/GS-01: the store has checked the table's history through entry {head.seq}" in done.stdout
        assert store.history(SITE, "GS-01")["seq"] == head.seq

        # Someone signs as the table with another key: refused, naming that key.
        other = table_key(tmp_path / "other" / "table.key")
        second = fingerprint(public_hex(other))
        deal_rounds(table, 1)
        forged = table.sign_head(other)
        assert wait_until(lambda: len(store.alerts(SITE, "GS-01")) == 2)
        assert store.alerts(SITE, "GS-01")[1] == (forged.seq, (
            f"the chain head is signed by key {second}, not by the key enrolled for table "
            f"GS-01 ({first}): the table's key was changed or another machine signs as the table. A new key is a "
            "re-enrolment: tablectl floor enroll --replace"))  # fmt: skip
        assert store.history(SITE, "GS-01")["seq"] == forged.seq - 1

        # A new key is not enrolled by the way: only with --replace, and on the record.
        again = tablectl("floor", "enroll", "--store", url, "--site", SITE, "--table", "GS-01", "--key", second)
        assert again.returncode == 2 and store.history(SITE, "GS-01")["seq"] == forged.seq - 1
        assert f"table GS-01 on site {SITE} is enrolled with key {first} (by alice at " in again.stderr
        assert "a new key is a re-enrolment: give --replace" in again.stderr
        replaced = tablectl("floor", "enroll", "--store", url, "--site", SITE, "--table", "GS-01", "--key", second,
                            "--replace", "--by", "bob")  # fmt: skip
        assert replaced.returncode == 0, replaced.stderr
        assert f"key {second} enrolled (enrolment 2, by bob, replacing {first})" in replaced.stdout
        assert store.history(SITE, "GS-01")["seq"] == forged.seq
        listed = tablectl("floor", "enroll", "--store", url, "--list").stdout.splitlines()
        assert [line.split("  ", 1)[1] for line in listed] == [
            f"{SITE}/GS-01  enrolment 1: {first} by alice",
            f"{SITE}/GS-01  enrolment 2: {second} by bob, replacing {first}",
        ]
        # And the first key no longer counts.
        deal_rounds(table, 1)
        old = table.sign_head(key)
        assert wait_until(lambda: len(store.alerts(SITE, "GS-01")) == 3)
        seq, what = store.alerts(SITE, "GS-01")[2]
        assert seq == old.seq and f"signed by key {first}, not" in what
    finally:
        store.close()
        publisher.stop()
        consumer.stop()


def test_enroll_refuses_what_is_not_a_key_and_says_what_it_takes(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    done = tablectl("floor", "enroll", "--store", url, "--site", SITE, "--table", "GS-01", "--key", "sha256:12ab")
    assert done.returncode == 2
    said = "tablectl floor: refused: --key sha256:12ab: 'sha256:12ab': a fingerprint is sha256: and 64 hex digits"
    assert said in done.stderr
    done = tablectl("floor", "enroll", "--store", url, "--table", "GS-01", "--key", "sha256:" + "0" * 64)
    assert done.returncode == 2 and "enroll needs --site (or --list)" in done.stderr


def test_each_store_keeps_every_enrolment_and_refuses_a_silent_key_change(store_url: str) -> None:
    first, second = "sha256:" + "1" * 64, "sha256:" + "2" * 64
    store = open_store(store_url)
    try:
        assert store.enrolled(SITE, "GS-01") is None
        assert store.enroll(SITE, "GS-01", first, "alice") is not None
        assert store.enroll(SITE, "GS-01", first, "carol") is None  # the same key again: nothing new
        with pytest.raises(EnrolmentRefused, match=f"table GS-01 on site {SITE} is enrolled with key {first}"):
            store.enroll(SITE, "GS-01", second, "mallory")
        assert store.enrolled(SITE, "GS-01") == first
        store.enroll(SITE, "GS-01", second, "bob", replace=True)
        assert store.enrolled(SITE, "GS-01") == second and store.enrolled(SITE, "GS-02") is None
        assert [(e.number, e.fingerprint, e.replaces, e.by) for e in store.enrolments(SITE, "GS-01")] == [
            (1, first, None, "alice"),
            (2, second, first, "bob"),
        ]
    finally:
        store.close()


def test_tablectl_verify_on_the_table_prints_the_fingerprint_to_enrol(tmp_path: Path) -> None:
    table_key(tmp_path / "old" / "table.key")
    (tmp_path / "state").mkdir()
    shutil.copy(tmp_path / "old" / "table.pub", tmp_path / "state" / "table.pub")  # left from a key made before
    key = table_key(tmp_path / "state" / "table.key")  # as the table makes it at its first start with a floor
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nid = "GS-07"\n[floor]\nbroker = "mqtt://127.0.0.1:1883"\nsite = "{SITE}"\n')
    done = tablectl("verify", "--sim", "--config", str(config), "--state-dir", str(tmp_path / "state"))
    expected = fingerprint(public_hex(key))
    assert (f"table key: {expected} ({tmp_path / 'state' / 'table.key'}); enrol it on the floor: tablectl floor enroll "
            f"--site {SITE} --table GS-07 --key {expected}") in done.stdout, done.stdout + done.stderr  # fmt: skip
    # The same from the public half with standard tools (hardware/floor.md), and readable by all.
    der = subprocess.run(["openssl", "pkey", "-pubin", "-in", str(tmp_path / "state" / "table.pub"), "-outform", "DER"],
                         capture_output=True, check=True).stdout  # fmt: skip
    assert expected == "sha256:" + hashlib.sha256(der[-32:]).hexdigest()
    assert (tmp_path / "state" / "table.pub").stat().st_mode & 0o777 == 0o644

"""sd_notify: the exact datagrams systemd would receive on a real Unix datagram socket."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.adapters.notify import Notifier


@pytest.fixture
def systemd_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket bound where systemd would listen, as NOTIFY_SOCKET names it."""
    path = tmp_path / "notify"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(path))
    listener.settimeout(2)
    yield listener, str(path)
    listener.close()


@pytest.fixture
def abstract_socket() -> Iterator[tuple[socket.socket, str]]:
    name = f"tablectl-test-{os.getpid()}-{id(object())}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind("\0" + name)
    listener.settimeout(2)
    yield listener, "@" + name
    listener.close()


def received(listener: socket.socket) -> bytes:
    return listener.recv(4096)


def test_ready_watchdog_status_and_stopping_arrive_as_systemd_reads_them(
    systemd_socket: tuple[socket.socket, str],
) -> None:
    listener, path = systemd_socket
    notifier = Notifier({"NOTIFY_SOCKET": path})
    assert notifier.enabled
    assert notifier.ready()
    assert notifier.watchdog()
    assert notifier.status("table GS-01: round 12 open")
    assert notifier.stopping()
    notifier.close()
    assert [received(listener) for _ in range(4)] == [
        b"READY=1",
        b"WATCHDOG=1",
        b"STATUS=table GS-01: round 12 open",
        b"STOPPING=1",
    ]


def test_ready_with_a_status_is_one_datagram_of_two_fields(systemd_socket: tuple[socket.socket, str]) -> None:
    listener, path = systemd_socket
    Notifier({"NOTIFY_SOCKET": path}).ready("journal replayed: 1204 entries")
    assert received(listener) == b"READY=1\nSTATUS=journal replayed: 1204 entries"


def test_a_status_with_a_newline_cannot_inject_a_second_field(systemd_socket: tuple[socket.socket, str]) -> None:
    listener, path = systemd_socket
    Notifier({"NOTIFY_SOCKET": path}).status("shoe fault\nREADY=1")
    assert received(listener) == b"STATUS=shoe fault READY=1"


def test_extend_timeout_asks_for_microseconds(systemd_socket: tuple[socket.socket, str]) -> None:
    listener, path = systemd_socket
    Notifier({"NOTIFY_SOCKET": path}).extend_timeout(30)
    assert received(listener) == b"EXTEND_TIMEOUT_USEC=30000000"


def test_an_abstract_socket_named_with_at_sign_receives_the_datagrams(
    abstract_socket: tuple[socket.socket, str],
) -> None:
    listener, name = abstract_socket
    notifier = Notifier({"NOTIFY_SOCKET": name})
    assert notifier.address == name
    notifier.ready()
    notifier.watchdog()
    assert [received(listener), received(listener)] == [b"READY=1", b"WATCHDOG=1"]


def test_without_notify_socket_the_notifier_says_it_is_off_and_sends_nothing() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    assert notifier.address is None
    assert notifier.ready() is False
    assert notifier.watchdog() is False


def test_a_vanished_systemd_socket_is_logged_once_and_never_raises(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")})
    with caplog.at_level(logging.WARNING, logger="controller.adapters.notify"):
        assert notifier.watchdog() is False
        assert notifier.watchdog() is False
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "could not notify systemd" in warnings[0] and "WATCHDOG=1" in warnings[0]


def test_sending_works_again_once_systemd_listens(tmp_path: Path) -> None:
    path = tmp_path / "notify"
    notifier = Notifier({"NOTIFY_SOCKET": str(path)})
    assert notifier.watchdog() is False
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(path))
    listener.settimeout(2)
    try:
        assert notifier.watchdog() is True
        assert received(listener) == b"WATCHDOG=1"
    finally:
        listener.close()


@pytest.mark.parametrize(
    ("env", "interval"),
    [
        ({"WATCHDOG_USEC": "10000000"}, 5.0),  # WatchdogSec=10: ping every 5 s
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "4242"}, 5.0),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}, None),  # meant for another process
        ({"WATCHDOG_USEC": "3000000"}, 1.5),
        ({}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "ten seconds"}, None),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "main"}, None),
    ],
)
def test_watchdog_interval_is_half_the_deadline_for_our_process_only(
    env: dict[str, str], interval: float | None
) -> None:
    assert Notifier(env, pid=4242).watchdog_interval() == interval


def test_watchdog_interval_defaults_to_this_process_id() -> None:
    env = {"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": str(os.getpid())}
    assert Notifier(env).watchdog_interval() == 1.0

"""The shoe is named by a pyserial URL: a device path (above), `spy://` to see the wire, and
`socket://` for a shoe behind a serial-to-network bridge (ser2net style)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import serial

from controller.engine.cards import parse_cards

from .conftest import WAIT


def test_spy_url_reads_the_shoe_and_writes_a_hex_dump_of_the_wire(
    make_shoe: Any, make_reader: Any, log: Any, link: str, tmp_path: Path
) -> None:
    dump = tmp_path / "wire.txt"
    shoe = make_shoe(parse_cards(["AS", "TD"]))
    make_reader(url=f"spy://{link}?file={dump}")
    shoe.draw(2)
    assert log.wait_cards(2) == ["AS", "TD"]
    assert shoe.wait_acknowledged(WAIT)
    text = dump.read_text()
    # The dump shows both directions: the shoe's frames (7E-delimited) and the host's ACKs.
    assert "7E" in text.upper()
    assert "41 53" in text.upper() and "54 44" in text.upper()  # 'AS' and 'TD' on the wire


@pytest.fixture
def tcp_bridge(link: str) -> Iterator[int]:
    """A TCP port on 127.0.0.1 that forwards bytes both ways to the shoe's pty."""
    server = socket.create_server(("127.0.0.1", 0))
    port = int(server.getsockname()[1])
    stop = threading.Event()
    opened: list[Any] = []

    def pump(read: Any, write: Any) -> None:
        while not stop.is_set():
            try:
                data = read()
            except (OSError, serial.SerialException):
                return
            if data:
                try:
                    write(data)
                except (OSError, serial.SerialException):
                    return

    def serve() -> None:
        server.settimeout(0.1)
        conn: socket.socket | None = None
        while conn is None and not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
        if conn is None:
            return
        conn.settimeout(0.05)
        shoe_port = serial.serial_for_url(link, timeout=0.05)
        opened.extend([conn, shoe_port])

        def from_socket() -> bytes:
            assert conn is not None
            try:
                return conn.recv(4096)
            except TimeoutError:
                return b""

        threads = [
            threading.Thread(target=pump, args=(lambda: shoe_port.read(4096), conn.sendall), name="bridge-up"),
            threading.Thread(target=pump, args=(from_socket, shoe_port.write), name="bridge-down"),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    thread = threading.Thread(target=serve, name="bridge")
    thread.start()
    yield port
    stop.set()
    thread.join(WAIT)
    for thing in opened:
        thing.close()
    server.close()


def test_socket_url_reads_a_shoe_behind_a_network_bridge(
    make_shoe: Any, make_reader: Any, log: Any, tcp_bridge: int
) -> None:
    shoe = make_shoe(parse_cards(["QH", "2C", "JK"]))
    make_reader(url=f"socket://127.0.0.1:{tcp_bridge}")
    shoe.draw(3)
    assert log.wait_cards(3) == ["QH", "2C", "JK"]
    assert shoe.wait_acknowledged(WAIT)  # the ACKs travelled back over TCP

"""TLS with a password or a client certificate, and no credential in any log line."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from controller.adapters.floor.config import Broker, FloorConfig

from .conftest import SITE, WAIT_S, Mosquitto, deal_rounds, make_publisher, make_table

PASSWORD = "s3cret-floor-pw-9"


def tls_broker(mosquitto_bin: str, home: Path, certificates: dict[str, Path], auth: str) -> Mosquitto:
    broker = Mosquitto(
        mosquitto_bin,
        home,
        extra=(
            f"cafile {certificates['ca_pem']}\ncertfile {certificates['broker_pem']}\n"
            f"keyfile {certificates['broker_key']}\n{auth}"
        ),
    )
    broker.start()
    return broker


def test_over_tls_with_a_password_events_arrive_and_no_log_line_carries_the_password(
    mosquitto_bin: str, certificates: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    passwd = tmp_path / "passwd"
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(passwd), "gs-01", PASSWORD], check=True, capture_output=True)
    broker = tls_broker(
        mosquitto_bin, tmp_path / "broker", certificates, f"allow_anonymous false\npassword_file {passwd}\n"
    )
    try:
        (tmp_path / "right").write_text(PASSWORD + "\n")
        (tmp_path / "wrong").write_text("not-" + PASSWORD + "\n")
        tls = Broker("127.0.0.1", broker.port, True)
        caplog.set_level(logging.DEBUG)
        table = make_table(tmp_path)
        good = make_publisher(
            FloorConfig(tls, SITE, "gs-01", str(tmp_path / "right"), ca_file=str(certificates["ca_pem"])), table
        )
        good.start()
        deal_rounds(table, 1)
        assert good.wait_acked(table.journal.last_seq, WAIT_S)
        good.stop()
        other = make_table(tmp_path / "other")
        refused = make_publisher(
            FloorConfig(tls, SITE, "gs-01", str(tmp_path / "wrong"), ca_file=str(certificates["ca_pem"])), other
        )
        refused.start()
        deal_rounds(other, 1)
        assert not refused.wait_acked(other.journal.last_seq, 2.0)
        refused.stop()
    finally:
        broker.stop()

    assert "refused the connection: Not authorized" in caplog.text
    assert "mqtts://127.0.0.1" in caplog.text
    assert PASSWORD not in caplog.text  # neither the right one nor the wrong one ("not-" + it)


def test_a_table_with_a_client_certificate_publishes_to_a_broker_that_requires_one(
    mosquitto_bin: str, certificates: dict[str, Path], tmp_path: Path
) -> None:
    broker = tls_broker(
        mosquitto_bin,
        tmp_path / "broker",
        certificates,
        "require_certificate true\nuse_identity_as_username true\nallow_anonymous false\n",
    )
    try:
        tls = Broker("127.0.0.1", broker.port, True)
        table = make_table(tmp_path)
        without = make_publisher(FloorConfig(tls, SITE, ca_file=str(certificates["ca_pem"])), table)
        without.start()
        deal_rounds(table, 1)
        assert not without.wait_acked(table.journal.last_seq, 2.0)  # the broker refuses a table with no certificate
        without.stop()
        publisher = make_publisher(
            FloorConfig(
                tls,
                SITE,
                ca_file=str(certificates["ca_pem"]),
                cert_file=str(certificates["table_pem"]),
                key_file=str(certificates["table_key"]),
            ),
            table,
        )
        publisher.start()
        assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
        publisher.stop()
    finally:
        broker.stop()
    assert table.journal.get_meta("floor.acked") == str(table.journal.last_seq)

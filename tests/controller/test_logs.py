"""Log lines journald keeps with their level: under systemd a line is `<priority>text` with no
timestamp of its own (journald stamps it); on a terminal it keeps its time."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from controller.adapters.logs import JournalFormatter, configure, under_journald


def test_journal_stream_naming_standard_error_means_journald(tmp_path: Path) -> None:
    with (tmp_path / "err").open("w") as stream:
        st = os.fstat(stream.fileno())
        assert under_journald({"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}, stream)
        assert not under_journald({"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino + 1}", "INVOCATION_ID": "x"}, stream)
        assert under_journald({"INVOCATION_ID": "4f1c"}, stream)  # systemd without JOURNAL_STREAM
        assert not under_journald({}, stream)


def test_each_line_carries_its_syslog_priority_and_no_timestamp() -> None:
    formatter = JournalFormatter("SIMULATED %(levelname)s %(message)s")

    def line(level: int, message: str) -> str:
        return formatter.format(logging.LogRecord("tablectl", level, __file__, 1, message, None, None))

    assert line(logging.ERROR, "shoe fault: silent") == "<3>SIMULATED ERROR shoe fault: silent"
    assert line(logging.WARNING, "x").startswith("<4>")
    assert line(logging.INFO, "ready").startswith("<6>")
    assert line(logging.DEBUG, "d").startswith("<7>")
    assert line(logging.CRITICAL, "c").startswith("<2>")
    assert line(logging.ERROR, "two\nlines") == "<3>SIMULATED ERROR two\n<3>lines"  # journald splits lines


def test_configure_writes_journald_lines_under_systemd_and_stamped_lines_elsewhere(tmp_path: Path) -> None:
    root = logging.getLogger()
    kept, level = list(root.handlers), root.level
    texts = {}
    try:
        for env, journal in (({"INVOCATION_ID": "4f1c"}, True), ({}, False)):
            with (tmp_path / f"log-{journal}").open("w") as stream:
                assert configure("SIMULATED ", env=env, stream=stream) is journal
                logging.getLogger("tablectl").warning("The shoe is empty")
            texts[journal] = (tmp_path / f"log-{journal}").read_text()
    finally:
        root.handlers[:] = kept
        root.setLevel(level)
    assert texts[True] == "<4>SIMULATED WARNING The shoe is empty\n"
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ SIMULATED tablectl WARNING The shoe is empty\n", texts[False])

"""The installed tablectl, checked from outside the checkout (called by .ci/wheel-check).

Run with the Python of the venv under test, from a directory that is not the checkout:

    python wheel_check.py CHECKOUT WORKDIR

It refuses to go on if `controller` is imported from the checkout or the checkout is on sys.path,
then runs `tablectl doctor --sim`, and for each game `tablectl run --sim --demo` until a round
settles (read through GET /api/rounds), that round's file replayed by `tablectl replay` to the
settlement the table paid, and `tablectl recall` of the same journal. Only the standard library:
what it checks is the installed program, not this script's imports.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

GAMES = ("grand-slam", "jokers-22", "baseball-poker")
SETTLE_TIMEOUT_S = 120.0


def fail(message: str) -> None:
    print(f"wheel-check: FAILED: {message}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def step(message: str) -> None:
    print(f"wheel-check: {message}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: What the check's own environment says that a table run by it must not believe (it is no service).
NOT_PASSED_ON = ("NOTIFY_SOCKET", "INVOCATION_ID", "JOURNAL_STREAM")
#: The tokens the check's tables run with (reads need a role too); the supervisor's reads all.
DEALER_TOKEN = "wheel-check-dealer-0123456789"
SUPERVISOR_TOKEN = "wheel-check-supervisor-0123456789"


def opened(port: int, path: str) -> Any:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {SUPERVISOR_TOKEN}"}
    )
    return urllib.request.urlopen(request, timeout=5)


def get(port: int, path: str) -> Any:
    with opened(port, path) as answer:
        return json.load(answer)


def run(tablectl: Path, *args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(tablectl), *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)


def check_not_from_checkout(checkout: Path, venv: Path) -> None:
    import controller
    import hardware

    for module in (controller, hardware):
        where = Path(module.__file__ or "").resolve()
        if checkout in where.parents or venv not in where.parents:
            fail(f"{module.__name__} was imported from {where}, not from the installed venv {venv}")
    for entry in sys.path:
        resolved = Path(entry or os.getcwd()).resolve()
        if resolved == checkout or checkout in resolved.parents:
            fail(f"the checkout is on sys.path ({entry!r})")
    step(f"imports come from {Path(controller.__file__ or '').parent.parent}, not the checkout")


def demo_round(tablectl: Path, game: str, work: Path) -> None:
    here = work / game
    here.mkdir()
    (here / "table.toml").write_text(f'[table]\nid = "WHEEL-{game}"\ngame = "{game}"\n', encoding="utf-8")
    port = free_port()
    log = here / "daemon.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(tablectl), "run", "--sim", "--demo", "--demo-interval", "0.05", "--config", "table.toml",
             "--state-dir", "state", "--http", f"127.0.0.1:{port}", "--seed", "14"],
            cwd=here, stdout=out, stderr=subprocess.STDOUT,
            env={
                **{k: v for k, v in os.environ.items() if k not in NOT_PASSED_ON},
                "TABLECTL_DEALER_TOKEN": DEALER_TOKEN,
                "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR_TOKEN,
            },
        )
    settled: dict[str, Any] | None = None
    round_file: Any = None
    try:
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while settled is None:
            if proc.poll() is not None:
                fail(f"{game}: tablectl run exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                fail(f"{game}: no round settled within {SETTLE_TIMEOUT_S:g} s: {tail}")
            try:
                rounds = get(port, "/api/rounds?last=5")["rounds"]
            except OSError:
                rounds = []
            settled = next((r for r in rounds if r["status"] == "settled"), None)
            if settled is None:
                time.sleep(0.2)
        round_file = get(port, f"/api/rounds/{settled['round']}/file")
        screen = get(port, "/api/game")["screen"]  # the game's own screen, from its package
        if None in screen.values():
            fail(f"{game}: GET /api/game names no screen file for {sorted(k for k, v in screen.items() if v is None)}")
        for page in ("/", "/supervisor", "/static/js/dealer.js", "/metrics", *screen.values()):
            with opened(port, page) as answer:
                if answer.status != 200 or not answer.read():
                    fail(f"{game}: {page} answered {answer.status}")
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    if code != 0:
        fail(f"{game}: tablectl run stopped with {code}: {log.read_text(errors='replace')[-2000:]}")
    step(
        f"{game}: tablectl run --sim --demo settled round {settled['round']}; "
        "the screens (the game's from its package) and /metrics were served"
    )
    (here / "round.json").write_text(json.dumps(round_file), encoding="utf-8")
    replayed = run(tablectl, "replay", "round.json", cwd=here)
    if replayed.returncode != 0:
        fail(f"{game}: tablectl replay exited {replayed.returncode}: {replayed.stderr.strip()}")
    if json.loads(replayed.stdout) != settled["settlement"]:
        fail(f"{game}: tablectl replay gave {replayed.stdout.strip()}, the table paid {settled['settlement']}")
    step(f"{game}: tablectl replay of its round file gave the settlement the table paid")
    recall = run(tablectl, "recall", "--config", "table.toml", "--sim", "--state-dir", "state", "--json", cwd=here)
    if recall.returncode != 0 or not any(r["round"] == settled["round"] for r in json.loads(recall.stdout)):
        fail(f"{game}: tablectl recall did not list round {settled['round']}: {recall.stderr.strip()}")


def main() -> None:
    checkout, work = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    venv = Path(sys.prefix).resolve()
    tablectl = venv / "bin" / "tablectl"
    check_not_from_checkout(checkout, venv)
    doctor = run(tablectl, "doctor", "--sim", "--state-dir", str(work / "doctor-state"), cwd=work)
    print(doctor.stdout, end="")
    if doctor.returncode != 0:
        fail(f"tablectl doctor --sim exited {doctor.returncode}: {doctor.stderr.strip()}")
    if "hardware/pins.toml" not in doctor.stdout or str(checkout) in doctor.stdout:
        fail("the doctor did not load the pin map shipped in the installed package")
    for game in GAMES:
        demo_round(tablectl, game, work)
    step("all checks passed")


if __name__ == "__main__":
    main()

"""The audit trail: who did what, when and why, read back from the journal's own entries."""

from __future__ import annotations

from controller.engine.base import JSON
from controller.journal.log import Journal

AUDIT_KINDS = (
    "fault-cleared",
    "fault-acknowledged",
    "void",
    "pay-override",
    "shoe-reshuffled",
    "camera-recalibrated",
    "login",
    "journal-loss",
    "software-check",
    "software-install",
    "config-accepted",
)


def audit(journal: Journal, count: int) -> list[dict[str, JSON]]:
    """Supervisor acts, voids, new shoes and logins, oldest first (the last `count`)."""
    out: list[dict[str, JSON]] = []
    for entry in journal.last_of_kinds(AUDIT_KINDS, count):
        b = entry.body
        who, why = b.get("by", ""), b.get("reason", "")
        if entry.kind == "fault-cleared":
            card = f" with {b['card']}" if b.get("card") else ""
            what = f"cleared fault {b['fault']} by {b['action']}{card}"
        elif entry.kind == "fault-acknowledged":
            what = f"acknowledged fault {b['fault']}"
        elif entry.kind == "void":
            what = f"voided round {entry.round}"
        elif entry.kind == "pay-override":
            what = f"let the next round open with round {entry.round}'s payouts not confirmed"
        elif entry.kind == "shoe-reshuffled":
            what = "loaded a new shoe"
        elif entry.kind == "camera-recalibrated":
            what = "recalibrated the overhead camera"
        elif entry.kind == "journal-loss":
            what = f"accepted that journal entries {b['lost'][0]} to {b['lost'][1]} are lost for good"
        elif entry.kind == "software-check":
            who = b.get("by") or "the table"
            result = {True: "passed", False: "FAILED", None: "not a signed release"}[b.get("ok")]
            what = f"software authentication ({b.get('trigger')}): {result}"
            why = str(b.get("summary", ""))
        elif entry.kind == "config-accepted":
            what = f"accepted the configuration {b.get('file')} (sha256 {b.get('sha256')})"
        elif entry.kind == "software-install":
            what = f"{b.get('action')} tablectl {b.get('version')} (manifest sha256 {b.get('manifest_sha256')})"
        else:  # login
            who = f"{b.get('role', 'someone')} at {b.get('client')}"
            if b.get("locked_out"):
                what = f"was locked out for {b['locked_out']} s after repeated failed logins"
            else:
                what = "logged in" if b.get("ok") else "failed to log in"
        out.append({"seq": entry.seq, "at": entry.at, "who": who, "what": what, "why": why, "round": entry.round})
    return out

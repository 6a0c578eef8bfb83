"""The audit trail: who did what, when and why, read back from the journal's own entries."""

from __future__ import annotations

from controller.engine.base import JSON
from controller.journal import Journal

AUDIT_KINDS = (
    "fault-cleared",
    "fault-acknowledged",
    "void",
    "pay-override",
    "shoe-reshuffled",
    "camera-recalibrated",
    "login",
    "journal-loss",
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
        else:  # login
            who = f"{b.get('role', 'someone')} at {b.get('client')}"
            if b.get("locked_out"):
                what = f"was locked out for {b['locked_out']} s after repeated failed logins"
            else:
                what = "logged in" if b.get("ok") else "failed to log in"
        out.append({"seq": entry.seq, "at": entry.at, "who": who, "what": what, "why": why, "round": entry.round})
    return out

"""Journal entries as the table reads them: one frozen record type per entry kind.

A journal `Entry` is stored as (seq, at, round, kind, body JSON). `parse_entry` reads it once into
its record (the opening's and a decision's engine event read back, a card parsed, a confirm press
told apart from any other button), so the reducer (`TableState.apply`) and the camera's meaning
dispatch on the record's type and never look into a body by its keys again.

The bodies are read as the table has always written them: a key the table's reducer did not read
before is read with a default here too, so every journal an earlier table wrote still parses.
Entries kept for the record only (dealers' sign-in, rating sessions, installs, the accepted
configuration, signed chain heads) have records too and change nothing in the reducer. A kind the
table does not know (a journal written by a later release) parses as `OtherEntry` and changes
nothing but what every entry changes (the camera's meaning still follows it), as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from controller.engine.base import JSON, Event, event_from_json
from controller.engine.cards import Card, parse_card

if TYPE_CHECKING:
    from controller.journal.log import Entry


@dataclasses.dataclass(frozen=True, kw_only=True)
class TableEntry:
    """What every entry has: its journal number, when it was written and the round it belongs to."""

    kind: ClassVar[str] = ""
    seq: int
    at: str
    round: int | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class RoundOpened(TableEntry):
    """`round-open`: the dealer opened a round (`via` "camera" when the camera proposed the wagers)."""

    kind: ClassVar[str] = "round-open"
    event: Event
    by: str | None = None
    via: str | None = None
    scene_seq: int | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class CardRead(TableEntry):
    """`card`: a card came out of the shoe (or was entered by the dealer); `source` says whence."""

    kind: ClassVar[str] = "card"
    card: Card
    source: Mapping[str, JSON]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Decided(TableEntry):
    """`decision`: a player's choice, as the engine's event."""

    kind: ClassVar[str] = "decision"
    event: Event
    by: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class FaultRaised(TableEntry):
    """`fault`: a fault latched by a device or the table (`card`: the card it is about, if any)."""

    kind: ClassVar[str] = "fault"
    code: str
    message: str
    card: str | None = None
    source: Mapping[str, JSON]


@dataclasses.dataclass(frozen=True, kw_only=True)
class FaultAcknowledged(TableEntry):
    kind: ClassVar[str] = "fault-acknowledged"
    fault: int
    by: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class FaultCleared(TableEntry):
    """`fault-cleared`: a supervisor's action on a fault (`card`: the replacement, for replace)."""

    kind: ClassVar[str] = "fault-cleared"
    fault: int
    action: str
    by: str
    reason: str
    card: Card | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Voided(TableEntry):
    """`void`: a supervisor voided the round being dealt."""

    kind: ClassVar[str] = "void"
    by: str
    reason: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class PayOverride(TableEntry):
    """`pay-override`: a supervisor lets the next round open although the payouts of the settled
    round (`round`) were not confirmed, saying who and why (the round stays not paid)."""

    kind: ClassVar[str] = "pay-override"
    by: str
    reason: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class ButtonPressed(TableEntry):
    """`button`: a dealer's button other than confirm (`source`: the shoe's message, if any)."""

    kind: ClassVar[str] = "button"
    button: str
    by: str | None = None
    source: Mapping[str, JSON]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConfirmPressed(ButtonPressed):
    """`button` confirm: the payouts are made, a new shoe is loaded, or the dealer read a notice."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class NewShoe(TableEntry):
    """`shoe-reshuffled`: a freshly shuffled shoe is loaded (between rounds)."""

    kind: ClassVar[str] = "shoe-reshuffled"
    by: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class ShoeSignal(TableEntry):
    """`shoe-event`: the shoe says the cut card came out or it is empty (`event` in its words)."""

    kind: ClassVar[str] = "shoe-event"
    event: str
    source: Mapping[str, JSON]


@dataclasses.dataclass(frozen=True, kw_only=True)
class JournalRestored(TableEntry):
    """`journal-restored`: the journal can be written again after the fault `code`."""

    kind: ClassVar[str] = "journal-restored"
    code: str
    message: str = ""
    since: str = ""
    refused: int = 0


@dataclasses.dataclass(frozen=True, kw_only=True)
class SceneChanged(TableEntry):
    """`scene`: what changed in the camera's settled view (`camera` None: its state did not)."""

    kind: ClassVar[str] = "scene"
    camera: str | None = None
    why: str = ""
    zones: Mapping[str, Mapping[str, Any]]
    pucks: Mapping[str, str | None]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Login(TableEntry):
    """`login`: a login to the table's API, good or refused (for the audit trail only)."""

    kind: ClassVar[str] = "login"
    client: str | None = None
    ok: bool = False
    role: str | None = None
    locked_out: int | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class CameraRecalibrated(TableEntry):
    """`camera-recalibrated`: a supervisor recalibrated the overhead camera (audit trail only)."""

    kind: ClassVar[str] = "camera-recalibrated"
    by: str = ""
    reason: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class JournalLoss(TableEntry):
    """`journal-loss`: a person accepted that entries `lost` (first, last) are gone for good."""

    kind: ClassVar[str] = "journal-loss"
    lost: tuple[int, int] | None = None
    by: str = ""
    reason: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SoftwareChecked(TableEntry):
    """`software-check`: a run of the software authentication (controller/security/authentication.py):
    `ok` True passed, False failed (a blocking fault until a check passes), None not a release.
    `unfinished`: how the check's own process ended without a report (controller/security/checker.py),
    when that is why it failed."""

    kind: ClassVar[str] = "software-check"
    ok: bool | None
    summary: str
    trigger: str = ""
    unfinished: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class DealerListed(TableEntry):
    """`dealer-list`: the supervisor's list of the dealers who may sign in here, whole."""

    kind: ClassVar[str] = "dealer-list"
    dealers: tuple[Mapping[str, JSON], ...] = ()
    by: str = ""
    reason: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class DealerSignedIn(TableEntry):
    """`dealer-in`: a listed dealer's down begins; rounds opened from now on are theirs."""

    kind: ClassVar[str] = "dealer-in"
    dealer: str
    by: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class DealerSignedOut(TableEntry):
    """`dealer-out`: the signed-in dealer's down ends."""

    kind: ClassVar[str] = "dealer-out"
    dealer: str = ""
    by: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class RatingOpened(TableEntry):
    """`rating-open`: a rated player's session begins at a place (a seat; a spot at Jokers 22)."""

    kind: ClassVar[str] = "rating-open"
    place: int
    player: str
    by: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class RatingClosed(TableEntry):
    """`rating-close`: the rating session at a place ends (`player` None: every session there)."""

    kind: ClassVar[str] = "rating-close"
    place: int
    player: str | None = None
    by: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class SoftwareInstalled(TableEntry):
    """`software-install`: an install, upgrade, downgrade or removal of the table's software."""

    kind: ClassVar[str] = "software-install"
    action: str
    version: str = ""
    manifest_sha256: str = ""
    by: str = ""
    previous: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConfigAccepted(TableEntry):
    """`config-accepted`: a supervisor accepted the configuration file with this digest."""

    kind: ClassVar[str] = "config-accepted"
    file: str = ""
    sha256: str = ""
    by: str = ""
    reason: str = ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ChainHeadSigned(TableEntry):
    """`chain-head`: the table signed where its hash chain stood after entry `head_seq`
    (controller/security/chainhead.py; the floor checks its entries against it)."""

    kind: ClassVar[str] = "chain-head"
    head_seq: int
    chain: str
    signed_at: str
    key: str
    sig: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class OtherEntry(TableEntry):
    """An entry of a kind this release does not know (a later release wrote it): it changes
    nothing of the table's own."""

    name: str
    body: Mapping[str, JSON]


def _source(body: Mapping[str, Any]) -> Mapping[str, JSON]:
    source = body.get("source") or {}
    return source if isinstance(source, Mapping) else {}


def _lost(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        return int(value[0]), int(value[1])
    return None


def parse_entry(entry: Entry) -> TableEntry:
    """The record of journal entry `entry` (KeyError, ValueError or CardError for a body the
    table could never have applied, as applying it raised before)."""
    body = entry.body
    head: dict[str, Any] = {"seq": entry.seq, "at": entry.at, "round": entry.round}
    kind = entry.kind
    if kind == "card":
        return CardRead(**head, card=parse_card(body["card"]), source=_source(body))
    if kind == "decision":
        return Decided(**head, event=event_from_json(body["event"]), by=body.get("by"))
    if kind == "button":
        name = body["button"]
        cls = ConfirmPressed if name == "confirm" else ButtonPressed
        return cls(**head, button=name, by=body.get("by"), source=_source(body))
    if kind == "scene":
        return SceneChanged(
            **head,
            camera=body.get("camera"),
            why=body.get("why", ""),
            zones=body.get("zones", {}),
            pucks=body.get("pucks", {}),
        )
    if kind == "round-open":
        return RoundOpened(
            **head,
            event=event_from_json(body["event"]),
            by=body.get("by"),
            via=body.get("via"),
            scene_seq=body.get("scene_seq"),
        )
    if kind == "fault":
        return FaultRaised(
            **head, code=body["code"], message=body["message"], card=body.get("card"), source=_source(body)
        )
    if kind == "fault-acknowledged":
        return FaultAcknowledged(**head, fault=body["fault"], by=body["by"])
    if kind == "fault-cleared":
        action = body["action"]
        return FaultCleared(
            **head,
            fault=body["fault"],
            action=action,
            by=body.get("by", ""),
            reason=body.get("reason", ""),
            card=parse_card(body["card"]) if action == "replace" else None,
        )
    if kind == "void":
        return Voided(**head, by=body["by"], reason=body["reason"])
    if kind == "pay-override":
        return PayOverride(**head, by=body["by"], reason=body["reason"])
    if kind == "shoe-reshuffled":
        return NewShoe(**head, by=body.get("by"))
    if kind == "shoe-event":
        return ShoeSignal(**head, event=body["event"], source=_source(body))
    if kind == "journal-restored":
        return JournalRestored(
            **head,
            code=body["code"],
            message=body.get("message", ""),
            since=body.get("since", ""),
            refused=body.get("refused", 0),
        )
    if kind == "login":
        return Login(
            **head, client=body.get("client"), ok=bool(body.get("ok")), role=body.get("role"),
            locked_out=body.get("locked_out"),
        )  # fmt: skip
    if kind == "camera-recalibrated":
        return CameraRecalibrated(**head, by=body.get("by", ""), reason=body.get("reason", ""))
    if kind == "journal-loss":
        return JournalLoss(**head, lost=_lost(body.get("lost")), by=body.get("by", ""), reason=body.get("reason", ""))
    if kind == "software-check":
        process = body.get("process")
        unfinished = str(process.get("failed") or "") if isinstance(process, Mapping) else ""
        return SoftwareChecked(
            **head, ok=body.get("ok"), summary=body.get("summary", ""), trigger=body.get("trigger", ""),
            unfinished=unfinished,
        )  # fmt: skip
    if kind == "dealer-list":
        listed = body.get("dealers") or []
        return DealerListed(
            **head, dealers=tuple(d for d in listed if isinstance(d, Mapping)), by=body.get("by", ""),
            reason=body.get("reason", ""),
        )  # fmt: skip
    if kind == "dealer-in":
        return DealerSignedIn(**head, dealer=str(body["dealer"]), by=body.get("by", ""))
    if kind == "dealer-out":
        return DealerSignedOut(**head, dealer=str(body.get("dealer", "")), by=body.get("by", ""))
    if kind == "rating-open":
        return RatingOpened(**head, place=int(body["place"]), player=str(body["player"]), by=body.get("by", ""))
    if kind == "rating-close":
        return RatingClosed(**head, place=int(body["place"]), player=body.get("player"), by=body.get("by", ""))
    if kind == "software-install":
        return SoftwareInstalled(
            **head, action=str(body["action"]), version=str(body.get("version", "")),
            manifest_sha256=str(body.get("manifest_sha256", "")), by=str(body.get("by", "")),
            previous=body.get("previous"),
        )  # fmt: skip
    if kind == "config-accepted":
        return ConfigAccepted(
            **head, file=str(body.get("file", "")), sha256=str(body.get("sha256", "")), by=str(body.get("by", "")),
            reason=str(body.get("reason", "")),
        )  # fmt: skip
    if kind == "chain-head":
        return ChainHeadSigned(
            **head, head_seq=int(body["seq"]), chain=str(body["chain"]), signed_at=str(body["at"]),
            key=str(body["key"]), sig=str(body["sig"]),
        )  # fmt: skip
    return OtherEntry(**head, name=kind, body=body)

"""Request bodies of the API that every game shares, as pydantic models: a bad body is a 422
that names the field. The bodies that open a round and take a decision are each game's own
(`GameAdapter.opening_model()`, `.decision_model()`, in `controller/games/<game>/api.py`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StringConstraints

from controller.games.bodies import Body, Name

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
CardText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=3)]


class LoginBody(Body):
    token: Annotated[str, StringConstraints(min_length=1, max_length=512)]


class WhoBody(Body):
    name: Name | None = None


class VoidBody(Body):
    reason: Text
    name: Name | None = None


class RecalibrateBody(Body):
    reason: Text | None = None
    name: Name | None = None


class ClearFaultBody(Body):
    action: Literal["confirm", "replace", "dismiss", "void"]
    reason: Text
    card: CardText | None = None
    name: Name | None = None


class SimShoeBody(Body):
    cards: list[CardText] = Field(min_length=1, max_length=416)
    # Cards this table's shoe cannot hold (a joker in a Grand Slam shoe) are refused unless the
    # caller says they mean it: to test the impossible-card fault.
    impossible: StrictBool = False


class SimDrawBody(Body):
    count: StrictInt = Field(default=1, ge=1, le=52)


class SimFaultBody(Body):
    fault: Literal["silent", "bad-crc", "slow", "garbage", "duplicate", "misread", "drop", "restore"]
    on: StrictBool = True


class VerifyBody(Body):
    """A software check on demand: `seed` (hex, 1 to 64 bytes) for the program's HMAC under it."""

    seed: Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^([0-9a-fA-F]{2}){1,64}$")] | None = None
    name: Name | None = None


class AcceptConfigBody(Body):
    """The supervisor accepts the configuration file as it is now: why (who, with `name`)."""

    reason: Text
    name: Name | None = None


class DealerEntry(Body):
    """A dealer on the supervisor's list: their id (their own short code) and name."""

    id: Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,15}$")]
    name: Annotated[str, StringConstraints(strip_whitespace=True, max_length=80)] = ""


class DealerListBody(Body):
    """The supervisor's dealer list, whole, as it stands from now on."""

    dealers: list[DealerEntry] = Field(max_length=500)
    reason: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)] = ""
    name: Name | None = None


class DealerSignInBody(Body):
    """A dealer signs in at the start of a down with their id."""

    dealer: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=16)]


class RatingSessionBody(Body):
    """The supervisor opens (with the player id typed or scanned from the rating slip) or closes a
    place's rating session."""

    action: Literal["open", "close"]
    place: StrictInt = Field(ge=1, le=16)
    player: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] | None = None
    name: Name | None = None

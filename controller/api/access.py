"""Who may call what: the one table of routes and roles, and who sees face-down cards.

Every route of the app is listed here (a test checks that none is missing, and that the
README's table says the same). `controller.api.deps.caller` enforces it for every HTTP route,
before the route's body is read; the live feed asks it too. Public routes are the screens'
pages, the session routes (logging in is how a role is got) and `GET /api/health`, which tells
a caller without a role only whether the table is up.

What a role *sees* in what it may read is `controller.table.visibility`: the dealer never gets the
rank or suit of a face-down card of a live hand, the supervisor and surveillance get everything.
"""

from __future__ import annotations

from controller.api.auth import Role

EVERYONE: tuple[Role, ...] = ("dealer", "supervisor", "surveillance")
PLAY: tuple[Role, ...] = ("dealer", "supervisor")  # the supervisor may do what a dealer does
SUPERVISOR: tuple[Role, ...] = ("supervisor",)
OVERSIGHT: tuple[Role, ...] = ("supervisor", "surveillance")

#: "METHOD /path" (as the router declares it) -> the roles that may call it; None: anyone.
ACCESS: dict[str, tuple[Role, ...] | None] = {
    # the screens and their session
    "GET /": None,
    "GET /supervisor": None,
    "POST /api/login": None,
    "POST /api/logout": None,
    "GET /api/whoami": None,
    "GET /api/openapi.json": None,  # what the API is (FastAPI serves it; no table data)
    "GET /api/health": None,  # without a role: the status only
    # reading the table
    "GET /api/state": EVERYONE,
    "GET /api/game": EVERYONE,
    "WS /api/ws": EVERYONE,
    "GET /api/devices": EVERYONE,
    "GET /api/camera": EVERYONE,
    "GET /api/rounds": EVERYONE,
    "GET /api/rounds/{number}": EVERYONE,
    "GET /api/rounds/{number}/file": OVERSIGHT,
    "GET /api/rounds/{number}/replay": OVERSIGHT,
    "GET /api/meters": OVERSIGHT,
    "GET /api/audit": OVERSIGHT,
    "GET /api/config": OVERSIGHT,
    "GET /api/pace": OVERSIGHT,
    "GET /api/ratings": OVERSIGHT,
    "GET /api/dealers": EVERYONE,  # the dealer list and who is signed in (the dealer screen's sign-in)
    "GET /api/dealers/figures": OVERSIGHT,
    "GET /metrics": OVERSIGHT,  # a fleet's scraper reads with the surveillance token
    "POST /api/verify": OVERSIGHT,  # software authentication on demand: journaled, changes no play
    "GET /api/sim/pins": EVERYONE,
    # playing
    "POST /api/rounds": PLAY,
    "POST /api/rounds/from-camera": PLAY,
    "POST /api/decisions": PLAY,
    "POST /api/confirm": PLAY,
    "POST /api/faults/{fault_id}/acknowledge": PLAY,
    "POST /api/shoe/reshuffle": PLAY,
    "POST /api/sim/shoe": PLAY,
    "POST /api/sim/draw": PLAY,
    "POST /api/dealers/sign-in": PLAY,
    "POST /api/dealers/sign-out": PLAY,
    "POST /api/sim/scene": PLAY,
    # the supervisor's
    "POST /api/rounds/current/void": SUPERVISOR,
    "POST /api/rounds/current/override-payouts": SUPERVISOR,
    "POST /api/faults/{fault_id}/clear": SUPERVISOR,
    "POST /api/camera/recalibrate": SUPERVISOR,
    "POST /api/config/accept": SUPERVISOR,  # the configuration file as it is now, for the software check
    "POST /api/sim/fault": SUPERVISOR,
    "POST /api/dealers": SUPERVISOR,
    "POST /api/ratings/sessions": SUPERVISOR,
}


class NotListed(LookupError):
    """A route missing from ACCESS: a programming error, refused rather than guessed."""


def roles_for(method: str, path: str) -> tuple[Role, ...] | None:
    """The roles that may call `method path` (None: anyone); NotListed if it is not in the table."""
    key = f"{'GET' if method == 'HEAD' else method} {path}"
    try:
        return ACCESS[key]
    except KeyError:
        raise NotListed(f"{key} is not in the access table (controller/api/access.py)") from None


def role_words(roles: tuple[Role, ...]) -> str:
    """'the supervisor's' / 'the dealer's or the supervisor's' token, for a refusal."""
    return " or ".join(f"the {r}'s" for r in roles)

"""API tokens, one per role, compared in constant time; browser sessions; the login limiter.

The roles: the dealer (runs the game; sees no face-down card of a live hand), the supervisor
(clears faults, voids, recalls; sees everything) and surveillance (reads everything the
supervisor reads, changes nothing). What each may call and see: `controller/api/access.py`.

Tokens come from `TABLECTL_DEALER_TOKEN` / `TABLECTL_SUPERVISOR_TOKEN` /
`TABLECTL_SURVEILLANCE_TOKEN`, or from files named by the `_FILE` variants (systemd's
LoadCredential puts them in $CREDENTIALS_DIRECTORY). A real table needs the dealer's and the
supervisor's; without a surveillance token nobody has that role. A simulated table without them
makes random ones and prints them once at start. A token never appears in a URL or a log line.
"""

from __future__ import annotations

import hmac
import os
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Role = Literal["dealer", "supervisor", "surveillance"]
ROLES: tuple[Role, ...] = ("dealer", "supervisor", "surveillance")
REQUIRED: tuple[Role, ...] = ("dealer", "supervisor")  # a real table refuses to start without these


class TokenError(RuntimeError):
    """The tokens cannot be set up; the text says which variable or file and what to do."""


@dataclass(frozen=True)
class Tokens:
    dealer: str
    supervisor: str
    surveillance: str | None = None  # None: no token grants the surveillance role
    generated: bool = False

    def role_of(self, presented: str) -> Role | None:
        """The role a presented token grants, checking every role in constant time."""
        found: Role | None = None
        for role in ROLES:
            token = getattr(self, role)
            if token is not None and hmac.compare_digest(presented.encode(), token.encode()):
                found = role
        return found


def load_tokens(*, simulated: bool, env: Mapping[str, str] | None = None) -> Tokens:
    env = os.environ if env is None else env
    values: dict[str, str] = {}
    for role in ROLES:
        name = f"TABLECTL_{role.upper()}_TOKEN"
        value = env.get(name)
        file = env.get(f"{name}_FILE")
        if value is None and file:
            try:
                value = Path(file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise TokenError(f"{name}_FILE={file}: cannot read the {role} token file: {exc.strerror}") from None
        if value is not None:
            if len(value) < 16:
                raise TokenError(f"{name}: the {role} token is too short; use at least 16 characters")
            values[role] = value
    if len(set(values.values())) < len(values):
        raise TokenError(f"the {', '.join(values)} tokens must all differ: a token names one role")
    if all(r in values for r in REQUIRED):
        return Tokens(values["dealer"], values["supervisor"], values.get("surveillance"))
    if not simulated:
        missing = [f"TABLECTL_{r.upper()}_TOKEN" for r in REQUIRED if r not in values]
        raise TokenError(
            f"a real table needs its API tokens: set {' and '.join(missing)} (or the _FILE variants); "
            "see hardware/install.md"
        )
    return Tokens(
        values.get("dealer") or secrets.token_urlsafe(24),
        values.get("supervisor") or secrets.token_urlsafe(24),
        values.get("surveillance") or secrets.token_urlsafe(24),
        generated=True,
    )


class Sessions:
    """Browser sessions: a random id in an HttpOnly cookie maps to a role until it expires.

    The token itself never goes back to the browser and never into a URL; a session ends at
    logout, at expiry, or when the daemon restarts.
    """

    COOKIE = "tablectl_session"

    def __init__(self, ttl_s: float = 12 * 3600, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._sessions: dict[str, tuple[Role, float]] = {}

    def start(self, role: Role) -> str:
        sid = secrets.token_urlsafe(32)
        self._sessions[sid] = (role, self._clock() + self.ttl_s)
        return sid

    def role_of(self, sid: str | None) -> Role | None:
        if not sid:
            return None
        found = self._sessions.get(sid)
        if found is None:
            return None
        role, expires = found
        if self._clock() >= expires:
            del self._sessions[sid]
            return None
        return role

    def end(self, sid: str | None) -> None:
        if sid:
            self._sessions.pop(sid, None)


class LoginLimiter:
    """Failed logins per client address: `limit` failures within `window_s` seconds lock the
    address out for `lockout_s` seconds after its last failure.

    While locked out every try is refused (429) without saying whether its token was right; a
    wrong token keeps the address locked (the lock-out runs from that failure), a right one does
    not. So an address that stops failing gets in with the right token `lockout_s` after its
    last failure, and one that keeps guessing stays out. A success does not wipe the address's
    failures (they age out of the window): a script's good token cannot cover another's guesses.
    `failed` answers True once per lock-out, when it begins, so the journal records the lock-out
    once rather than every try.
    """

    def __init__(
        self,
        limit: int = 5,
        window_s: float = 60.0,
        lockout_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.lockout_s = lockout_s
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._locked_until: dict[str, float] = {}

    def retry_after(self, client: str) -> float:
        """Seconds this client must wait before trying again (0: it may try now)."""
        until = self._locked_until.get(client)
        if until is None:
            return 0.0
        wait = until - self._clock()
        if wait <= 0:
            del self._locked_until[client]
            self._failures.pop(client, None)
            return 0.0
        return wait

    def failed(self, client: str) -> bool:
        """Count a wrong token; True when this failure begins a lock-out."""
        now = self._clock()
        if client in self._locked_until:  # still guessing while locked out: the lock-out goes on
            self._locked_until[client] = now + self.lockout_s
            return False
        failures = self._failures.setdefault(client, deque())
        while failures and failures[0] <= now - self.window_s:
            failures.popleft()
        failures.append(now)
        if len(failures) >= self.limit:
            self._locked_until[client] = now + self.lockout_s
            return True
        return False

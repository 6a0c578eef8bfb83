"""API tokens: a dealer token and a supervisor token, compared in constant time.

Tokens come from `TABLECTL_DEALER_TOKEN` / `TABLECTL_SUPERVISOR_TOKEN`, or from files named by
`TABLECTL_DEALER_TOKEN_FILE` / `TABLECTL_SUPERVISOR_TOKEN_FILE` (systemd's LoadCredential puts
them in $CREDENTIALS_DIRECTORY). A simulated table without them makes random ones and prints
them once at start; a real table refuses to start. A token never appears in a URL or a log line.
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

Role = Literal["dealer", "supervisor"]
ROLES: tuple[Role, ...] = ("dealer", "supervisor")


class TokenError(RuntimeError):
    """The tokens cannot be set up; the text says which variable or file and what to do."""


@dataclass(frozen=True)
class Tokens:
    dealer: str
    supervisor: str
    generated: bool = False

    def role_of(self, presented: str) -> Role | None:
        """The role a presented token grants, checking every role in constant time."""
        found: Role | None = None
        for role in ROLES:
            if hmac.compare_digest(presented.encode(), getattr(self, role).encode()):
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
    if len(values) == 2:
        if values["dealer"] == values["supervisor"]:
            raise TokenError("the dealer and supervisor tokens must differ")
        return Tokens(values["dealer"], values["supervisor"])
    if not simulated:
        missing = [f"TABLECTL_{r.upper()}_TOKEN" for r in ROLES if r not in values]
        raise TokenError(
            f"a real table needs its API tokens: set {' and '.join(missing)} (or the _FILE variants); "
            "see hardware/install.md"
        )
    return Tokens(
        values.get("dealer") or secrets.token_urlsafe(24),
        values.get("supervisor") or secrets.token_urlsafe(24),
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
    """At most `limit` failed logins per client in `window_s` seconds; then 429 until it passes."""

    def __init__(self, limit: int = 5, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}

    def retry_after(self, client: str) -> float:
        """Seconds this client must wait before trying again (0: it may try now)."""
        failures = self._recent(client)
        if len(failures) < self.limit:
            return 0.0
        return max(0.0, failures[0] + self.window_s - self._clock())

    def failed(self, client: str) -> None:
        self._recent(client).append(self._clock())

    def succeeded(self, client: str) -> None:
        self._failures.pop(client, None)

    def _recent(self, client: str) -> deque[float]:
        failures = self._failures.setdefault(client, deque())
        while failures and failures[0] <= self._clock() - self.window_s:
            failures.popleft()
        return failures

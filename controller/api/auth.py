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
import json
import logging
import os
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from controller.api.digests import hmac_sha256, sha256

Role = Literal["dealer", "supervisor", "surveillance"]
ROLES: tuple[Role, ...] = ("dealer", "supervisor", "surveillance")
REQUIRED: tuple[Role, ...] = ("dealer", "supervisor")  # a real table refuses to start without these

log = logging.getLogger("controller.api")


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


#: Why a screen's session is gone, in the words its login box shows (`Sessions.why`).
ENDED = {
    "expired": "This screen's session expired ({hours} after its login): log in again.",
    "signed-out": "This screen was signed out: log in again.",
    "tokens-changed": "The table's {role} token has changed since this screen logged in: log in with the new token.",
    "unknown": "The table does not know this screen's session (its sessions were cleared): log in again.",
}
#: The screens' sessions in the state directory (mode 0600), kept across restarts.
SESSIONS_FILE = "sessions.json"
#: How long an ended session's reason is kept (the cookie lives as long), so the screen is told why.
ENDED_KEPT_S = 7 * 24 * 3600.0


class Sessions:
    """Browser sessions: a random id in an HttpOnly cookie maps to a role until it expires.

    The token itself never goes back to the browser and never into a URL. A session ends at
    logout or at its expiry (wall-clock time, so a restart neither ends nor extends it), or when
    the role's token is no longer the one it was opened with. With `path` (the daemon's
    `<state dir>/sessions.json`, mode 0600) sessions survive a restart of the daemon: the file
    holds a hash of each session id, never the id, and a proof of the token keyed by the id, never
    the token. `why(sid)` says in words why a screen's session is gone.
    """

    COOKIE = "tablectl_session"

    def __init__(
        self,
        ttl_s: float = 12 * 3600,
        clock: Callable[[], float] = time.time,
        *,
        path: Path | None = None,
        tokens: Tokens | None = None,
    ) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self.path = path
        self.tokens = tokens
        # sha256(sid) -> (role, expires at, proof of the token); sha256(sid) -> (reason, role, until)
        self._sessions: dict[str, tuple[Role, float, str]] = {}
        self._ended: dict[str, tuple[str, Role | None, float]] = {}
        if path is not None:
            self._load(path)

    @property
    def cookie_max_age(self) -> int:
        """The cookie outlives its session, so that the screen can be told the session expired."""
        return int(self.ttl_s + ENDED_KEPT_S)

    def start(self, role: Role) -> str:
        sid = secrets.token_urlsafe(32)
        self._sessions[_key(sid)] = (role, self._clock() + self.ttl_s, self._proof(sid, role))
        self._save()
        return sid

    def role_of(self, sid: str | None) -> Role | None:
        if not sid:
            return None
        key = _key(sid)
        found = self._sessions.get(key)
        if found is None:
            return None
        role, expires, proof = found
        if self._clock() >= expires:
            self._close(key, "expired", role)
            return None
        if not hmac.compare_digest(proof, self._proof(sid, role)):
            self._close(key, "tokens-changed", role)
            return None
        return role

    def why(self, sid: str | None) -> tuple[str, str] | None:
        """(reason, words) for a screen whose cookie names a session that is gone; None when it has
        a session, or no cookie at all."""
        if not sid or self.role_of(sid) is not None:
            return None
        reason, role, _ = self._ended.get(_key(sid), ("unknown", None, 0.0))
        hours = self.ttl_s / 3600
        words = ENDED[reason].format(role=role or "screen", hours=f"{hours:g} hour{'s' if hours != 1 else ''}")
        return reason, words

    def end(self, sid: str | None) -> None:
        if sid:
            key = _key(sid)
            found = self._sessions.get(key)
            self._close(key, "signed-out", found[0] if found else None)

    def _proof(self, sid: str, role: Role) -> str:
        """The role's token now, keyed by the session id (which is never stored)."""
        token = getattr(self.tokens, role, None) if self.tokens is not None else None
        # The interpreter's SHA-256, not OpenSSL's (controller/api/digests.py): the same HMAC.
        return hmac_sha256(sid.encode(), (token or "").encode())

    def _close(self, key: str, reason: str, role: Role | None) -> None:
        self._sessions.pop(key, None)
        self._ended[key] = (reason, role, self._clock() + ENDED_KEPT_S)
        self._save()

    def _load(self, path: Path) -> None:
        """The sessions a previous run kept; a file that cannot be read is said in the log and left
        out (every screen logs in again), never trusted in part."""
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            sessions = {
                str(k): (_role(v["role"]), float(v["expires"]), str(v["proof"])) for k, v in doc["sessions"].items()
            }
            ended = {
                str(k): (str(v["reason"]), _role(v["role"]) if v["role"] else None, float(v["until"]))
                for k, v in doc["ended"].items()
                if v["reason"] in ENDED
            }
        except FileNotFoundError:
            return
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("%s: the screens' sessions cannot be read (%s): every screen logs in again", path, exc)
            return
        self._sessions, self._ended = sessions, ended

    def _save(self) -> None:
        if self.path is None:
            return
        now = self._clock()
        for key, (role, expires, _) in list(self._sessions.items()):  # never looked up again: kept as ended
            if expires <= now:
                del self._sessions[key]
                self._ended[key] = ("expired", role, expires + ENDED_KEPT_S)
        self._ended = {k: v for k, v in self._ended.items() if v[2] > now}
        doc = {
            "sessions": {k: {"role": r, "expires": e, "proof": p} for k, (r, e, p) in self._sessions.items()},
            "ended": {k: {"reason": why, "role": r, "until": u} for k, (why, r, u) in self._ended.items()},
        }
        temp = self.path.with_name(f".{self.path.name}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                os.fchmod(out.fileno(), 0o600)
                json.dump(doc, out)
            os.replace(temp, self.path)
        except OSError as exc:  # the sessions still hold for this run; a restart logs the screens out
            log.warning("%s: the screens' sessions cannot be kept (%s)", self.path, exc)


def _key(sid: str) -> str:
    return sha256(sid.encode()).hexdigest()  # the interpreter's, not OpenSSL's (controller/api/digests.py)


def _role(value: object) -> Role:
    if value not in ROLES:
        raise ValueError(f"{value!r} is not a role")
    return value


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

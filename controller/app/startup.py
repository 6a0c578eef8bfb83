"""What `tablectl run` makes sure of before it touches anything, and the addresses its ready line
gives.

In order, each refusal one plain line (StartRefused, exit 2) with nothing written:

1. the state directory is a directory, or can be one (no file in its place or above it);
2. the API's address can be bound: the socket is bound and listening here, then handed to
   uvicorn, so nothing can take the port between the check and the server;
3. the state directory is taken for this process alone: an exclusive flock on `tablectl.lock`
   inside it, held until the process ends (the kernel drops it when the process dies, however it
   dies, so a killed table never leaves a stale lock), with the holder's PID written in the file
   for the next one to name. The commands that write the journal take the same lock.

Only then are tokens made and printed, the journal opened and the shoe connected.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import ipaddress
import os
import pwd
import re
import socket
import stat
import subprocess
from collections.abc import Iterable
from pathlib import Path

#: The lock file in the state directory: one process at a time writes the journal beside it.
LOCK_NAME = "tablectl.lock"
#: The journal's files: each must be writable by the table's user, or the table cannot play.
JOURNAL_FILES = ("journal.sqlite3", "journal.sqlite3-wal", "journal.sqlite3-shm", "journal.head")
#: Addresses that mean "every address of this machine".
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
#: uvicorn's default listen backlog.
BACKLOG = 2048


class StartRefused(Exception):
    """Why the table cannot start (or a journal command cannot run), in one line that says what to
    do. Nothing has been written."""


class StateDirBusy(StartRefused):
    """Another process holds the state directory's lock."""

    def __init__(self, directory: Path, pid: int | None, holder: str) -> None:
        self.directory = directory
        self.pid = pid  # None: the holder had not written its PID yet
        self.holder = holder  # "tablectl run"
        who = f"PID {pid} ({holder})" if pid is not None else "another tablectl process"
        super().__init__(f"{directory}: the table's state directory is in use by {who}")


class StateLock:
    """The state directory's lock, held while this object is open (and by the process until it ends)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the flock
            self._fd = None


def _user() -> str:
    uid = os.geteuid()
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _owner(path: Path) -> str:
    try:
        uid = path.stat().st_uid
    except OSError:
        return "?"
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _cannot_write(path: Path, exc: OSError, what: str, directory: Path) -> StartRefused:
    """A state directory (or a file in it) this process cannot write: what is wrong and what to
    do. It is a permissions or mount problem, never damage to the journal."""
    if exc.errno == errno.EROFS:
        return StartRefused(
            f"{path}: {what} is on a read-only file system, so the journal cannot be written. What to do: mount it "
            f"read-write (`findmnt -T {path}` shows the mount; the kernel remounts a failing SD card read-only: "
            "check `dmesg`), then start again. The journal is not damaged: do not restore it"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        try:
            st = path.stat()
            mine = st.st_uid == os.geteuid()
            mode = f"mode {stat.S_IMODE(st.st_mode):04o}"
        except OSError:
            mine, mode = False, "mode unknown"
        if mine:  # its own: the mode, or an immutable attribute (which refuses even root)
            return StartRefused(
                f"{path}: {what} may not be written by its owner {_user()}: {mode}, or immutable "
                f"(`lsattr -d {path}`). What to do: `sudo chmod u+w {path}` (or `sudo chattr -i {path}`). The journal "
                "is not damaged: do not restore it"
            )
        fix = (
            f"`sudo chown -R tablectl:tablectl {directory}`"
            if directory.is_dir()
            else f"`sudo install -d -o tablectl -g tablectl {directory}`"
        )
        return StartRefused(
            f"{path}: {what} may not be written by {_user()}: it belongs to {_owner(path)}, {mode}. What to do: "
            f"give the state directory to the user the table runs as, {fix} (hardware/install.md, step 3). The "
            "journal is not damaged: do not restore it"
        )
    return StartRefused(f"{path}: {what} cannot be written: {exc.strerror or exc}")


def _write_error(path: Path) -> OSError:
    """Why os.access said no: a read-only file system, or permissions (an immutable file included)."""
    if _read_only_fs(path):
        return OSError(errno.EROFS, os.strerror(errno.EROFS))
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES))


def check_state_path(directory: Path) -> None:
    """StartRefused if the state directory, or a folder above it, is a file. Reads only."""
    for path in (directory, *directory.parents):
        if path.exists() or path.is_symlink():
            if not path.is_dir():
                kind = "the state directory" if path == directory else f"a folder of the state directory {directory}"
                raise StartRefused(
                    f"{path}: {kind} is a file, not a directory. What to do: give --state-dir (or state.dir in "
                    "table.toml) a directory, or move that file away; nothing was written"
                )
            return


def lock_state_dir(directory: Path, holder: str) -> StateLock:
    """Take the state directory (made if missing) for this process alone (see the module's
    docstring). `holder` is written beside the PID ("tablectl run"). StartRefused if it cannot be
    written, StateDirBusy if another process holds it."""
    check_state_path(directory)
    if not directory.is_dir():
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            parent = next((p for p in directory.parents if p.is_dir()), directory)
            raise _cannot_write(parent, exc, f"the folder to hold the state directory {directory}", directory) from None
    path = directory / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        where, what = (directory, "the state directory") if not path.exists() else (path, "its lock file")
        raise _cannot_write(where, exc, what, directory) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        text = b""
        with contextlib.suppress(OSError):
            text = os.pread(fd, 200, 0)
        os.close(fd)
        pid, _, who = text.decode(errors="replace").strip().partition(" ")
        raise StateDirBusy(directory, int(pid) if pid.isdigit() else None, who or "tablectl") from None
    try:
        _check_journal_files(directory)  # before the PID is written: a refusal writes nothing
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {holder}\n".encode(), 0)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            os.close(fd)
            raise _cannot_write(path, exc, "its lock file", directory) from None
        # A full disk: the lock holds all the same (only the PID is not named); the journal says
        # the disk is full in its own words, as a fault the table clears itself.
    except StartRefused:
        os.close(fd)
        raise
    return StateLock(path, fd)


def _check_journal_files(directory: Path) -> None:
    """The state directory must take new files (SQLite makes its -wal and -shm there) and the
    journal's files that exist must be writable by this process (a journal left by root and a
    service run as tablectl): said as a permissions problem, before SQLite calls it a failure."""
    for path in (directory, *(directory / name for name in JOURNAL_FILES)):
        if path.exists() and not os.access(path, os.W_OK):
            what = "the state directory" if path == directory else "a file of the journal"
            raise _cannot_write(path, _write_error(path), what, directory)


def bind_http(host: str, port: int) -> list[socket.socket]:
    """Sockets bound and listening on host:port (every address a name resolves to), SO_REUSEADDR as
    uvicorn sets it: handed to uvicorn so no other program can take the port in between. The
    wildcard '::' also takes IPv4 clients. StartRefused in one line if it cannot be bound."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartRefused(
            f"--http {where}: {host} is not an address or a name this machine can resolve ({exc.strerror}); "
            "give an address of this machine, such as 127.0.0.1, or 0.0.0.0 for every address"
        ) from None
    sockets: list[socket.socket] = []
    seen: set[tuple[int, object]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if host == "::" and len(infos) == 1 else 1)
            sock.bind(address)
            sock.listen(BACKLOG)  # two sockets bound with SO_REUSEADDR collide only here
            sock.set_inheritable(False)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise StartRefused(_bind_failed(where, port, exc)) from None
    return sockets


def _bind_failed(where: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"--http {where}: the port is in use by another program (another table? `ss -ltnp 'sport = :{port}'` "
            f"names it). What to do: stop it, or give this table another port (--http with another port, or "
            "`make run PORT=8100`); nothing was written"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"--http {where}: that address is not one of this machine's (`ip -4 addr` lists them); nothing written"
    if exc.errno == errno.EACCES:
        return f"--http {where}: ports below 1024 need privileges the table does not have; use a port such as 8000"
    return f"--http {where}: cannot listen there: {exc.strerror or exc}"


# -- the addresses a LAN client can open ---------------------------------------------------------


def screen_bases(scheme: str, host: str, port: int, addresses: Iterable[str]) -> list[str]:
    """The base URLs of the screens: the host itself, or when it listens on every address (0.0.0.0,
    ::), the host's non-loopback IPv4 addresses among `addresses` (empty if there is none)."""
    if host in WILDCARDS:
        return [f"{scheme}://{a}:{port}" for a in lan_ipv4(addresses)]
    shown = f"[{host}]" if ":" in host else host
    return [f"{scheme}://{shown}:{port}"]


def ready_addresses(scheme: str, host: str, port: int, addresses: Iterable[str]) -> tuple[str, str]:
    """The base URL the ready line names the screens at, and a note after them: on a wildcard host
    the first LAN address (the others in the note), or 127.0.0.1 with a note when there is none.
    `addresses` are the host's (host_addresses()), used only for a wildcard host."""
    bases = screen_bases(scheme, host, port, addresses)
    if host not in WILDCARDS:
        return bases[0], ""
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if not bases:
        return (
            f"{scheme}://127.0.0.1:{port}",
            f" (listening on every address, {shown}, but this machine has no network address yet: "
            f"from another machine open {scheme}://<its address>:{port}/)",
        )
    note = f" (listening on every address, {shown}"
    if len(bases) > 1:
        note += "; also at " + ", ".join(f"{b}/" for b in bases[1:])
    return bases[0], note + ")"


def lan_ipv4(addresses: Iterable[str]) -> list[str]:
    """The IPv4 addresses another machine could reach: no loopback, link-local or unspecified
    address, each once, in the order given."""
    out: list[str] = []
    for text in addresses:
        try:
            address = ipaddress.ip_address(text.strip())
        except ValueError:
            continue
        if address.version != 4 or address.is_loopback or address.is_link_local or address.is_unspecified:
            continue
        if str(address) not in out:
            out.append(str(address))
    return out


def host_addresses() -> list[str]:
    """This machine's IPv4 addresses, read from the kernel without any network traffic: the local
    routes of /proc/net/fib_trie, else `ip -o -4 addr show`, else the addresses the host name
    resolves to."""
    try:
        found = parse_fib_trie(Path("/proc/net/fib_trie").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        found = []
    if lan_ipv4(found):
        return found
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, timeout=5, check=False)
        found = parse_ip_addr(out.stdout)
    except (OSError, subprocess.SubprocessError):
        found = []
    if lan_ipv4(found):
        return found
    try:
        return [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        return []


def parse_fib_trie(text: str) -> list[str]:
    """The addresses /proc/net/fib_trie lists as this host's own (each followed by '/32 host LOCAL')."""
    found: list[str] = []
    last = None
    for line in text.splitlines():
        leaf = re.match(r"\s*[|+]-- (\d+\.\d+\.\d+\.\d+)\s*$", line)
        if leaf:
            last = leaf.group(1)
        elif last and re.match(r"\s*/32 host LOCAL", line) and last not in found:
            found.append(last)
    return found


def parse_ip_addr(text: str) -> list[str]:
    """The addresses of `ip -o -4 addr show` ('2: eth0    inet 10.0.20.11/24 brd ...')."""
    return re.findall(r"\binet (\d+\.\d+\.\d+\.\d+)/", text)

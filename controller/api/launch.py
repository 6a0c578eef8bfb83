"""Starting the API's own process (controller/api/channel.py says why it has one): from here, which
imports nothing of the table's, so `tablectl run` starts it before it loads the table's code
(controller/app/early.py) and the two processes load their libraries at once.

Two ways, one process either way (controller/app/api_process.py's `serve_api` on one end of a
socketpair and the sockets the daemon bound):
- forked (`launch(fork=...)`: `tablectl run`'s first start, controller/app/early.py): a copy of the
  table's process as it is before the table's code is loaded, with no thread and no journal open
  yet. The interpreter and what both processes use (asyncio and ssl, the table's code and the
  channel: `PRELOAD`) are loaded once, and their pages shared by the two until one writes them
  (`gc.freeze()` first, so neither's collector writes them all): the second interpreter costs less
  memory, and no start of its own. What only the API's process uses is loaded after the fork, in
  it alone: pydantic (the table's reads its bodies without it, controller/games/plain.py) and anyio
  (starlette's). A forked process's memory holds every page its parent had, so a module loaded
  before the fork that only one process uses is in both processes' RSS.
  Seen as `tablectl-api` (its name in /proc/PID/comm, `ps -o comm`, `top`); its command line is
  the daemon's.
- executed (`python -m controller.app.api_process`): an API process started again after one
  ended (the table's process has threads and its journal open by then, which a fork would copy),
  or when forking is not possible here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import importlib.util
import os
import signal
import socket
import sys
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

#: The API's process's name as the kernel shows it (/proc/PID/comm: at most 15 bytes).
NAME = "tablectl-api"
#: `tablectl run` forks its first API process (False: every start executes a fresh interpreter,
#: as a profiler wrapping `python -m controller.app.api_process` needs).
FORK = True
#: Loaded before the fork, once for both processes (each imports them anyway: the table's code and
#: the channel, the journal's entries, whose pages the two then share). Not what only the API's
#: process uses: pydantic and anyio are imported after the fork, by the API's process alone
#: (anyio's asyncio backend, which starlette loads when it first answers, as the API's process
#: starts: controller/app/api_process.py), so the table's process holds neither
#: (tests/controller/test_table_without_pydantic.py): anyio loaded here was 1.8 MB of the table's
#: RSS. The table's game (its rules and adapter, found through its entry point) is loaded too,
#: when `launch` is told it: the API's process gets the game's adapter in its start message.
#: Then what both processes import once started, so once here rather than once in each: the live
#: feed (its table half in the table's process, controller/api/side.py), the sessions' tokens and
#: digests, the heap's trimming, and the standard modules both come to (decimal and fractions:
#: statistics on the table's side, gpiozero's, and pydantic on the API's; hmac and secrets; ctypes;
#: platform): what a module loaded after the fork makes is made twice, once in each process:
#: 0.4-0.5 MB less of the daemon's memory counted once (benchmarks/bench_day_memory.py).
PRELOAD = (
    "controller.journal.log", "controller.table", "controller.api.channel",
    "controller.api.live", "controller.api.auth", "controller.app.heap",
    "decimal", "fractions", "hmac", "secrets", "ctypes", "platform",
)  # fmt: skip


def uvicorn_without_its_command_line() -> None:
    """Make `import uvicorn` give uvicorn's package without importing its command line
    (uvicorn.main: click, and the reloading and multiprocess supervisors, 2.6 MB of the API's
    process's own memory, never used: the API's process builds its `Config` and `Server` itself).
    The package is the same to whoever uses it: `Config`, `Server` and `__version__` are uvicorn's
    own, and `main` and `run` load uvicorn.main when first asked for
    (tests/controller/test_api_process_imports.py). Called by the API's process before it first
    imports uvicorn (controller/app/api_process.py's first import; a forked one before it loads
    it); nothing if uvicorn is loaded already or is not a package here."""
    if "uvicorn" in sys.modules:
        return
    spec = importlib.util.find_spec("uvicorn")
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # uvicorn's own import says what is wrong
    package = importlib.util.module_from_spec(spec)  # its __init__ not run: `import uvicorn.x` still works

    def command_line(name: str) -> object:
        if name not in ("main", "run"):
            raise AttributeError(f"module 'uvicorn' has no attribute {name!r}")
        main = importlib.import_module("uvicorn.main")
        vars(package).update(main=main.main, run=main.run)  # as uvicorn's __init__ has them, not the module
        return getattr(package, name)

    sys.modules["uvicorn"] = package
    try:
        own = vars(package)
        own["__version__"] = _uvicorn_version()
        own["Config"] = importlib.import_module("uvicorn.config").Config  # before uvicorn.lifespan, which imports it
        own["Server"] = importlib.import_module("uvicorn.server").Server
        own["__all__"] = ["main", "run", "Config", "Server"]
        own["__getattr__"] = command_line
    except Exception:
        # A uvicorn laid out otherwise than this knows (its version's modules differ from release to
        # release: 0.54, which the bundle pins, has no uvicorn._version): uvicorn's own import then,
        # the command line and its 2 MB with it. The table starts either way.
        for name in [name for name in sys.modules if name == "uvicorn" or name.startswith("uvicorn.")]:
            del sys.modules[name]


#: Standard modules the API's libraries import as they load and use only in what this API never or
#: rarely does: logging.config (uvicorn.config: a logging configuration given as a dict or a file;
#: with it logging.handlers, socketserver, configparser, queue), html (starlette's error page in
#: debug mode; with it html.entities' table of 2,231 entities), http.client (its table of status
#: phrases: starlette's HTTPException made without a detail, FastAPI's OpenAPI document) and
#: http.cookies (starlette: a request's Cookie header, a response's Set-Cookie); and OpenTelemetry's
#: propagators (FastAPI's own telemetry reads a request's trace headers with them when it is on: the
#: app turns it off, controller/api/app.py), which choose themselves as they load. Loaded on first use
#: in the API's process (`modules_loaded_on_first_use`): 0.9-1.0 MB less of the daemon's memory counted
#: once, at ready and after 1,000 entries (benchmarks/bench_day_memory.py).
ON_FIRST_USE = ("logging.config", "html", "http.client", "http.cookies", "opentelemetry.propagate")
#: The same in the table's process (controller/cli/main.py, once the API's process is forked), before
#: it loads its drivers: gpiozero's package, whose __init__ imports every device gpiozero has (its
#: boards, SPI devices, internal devices and fonts among them). The drivers import what they use from
#: gpiozero's own modules (drivers/buttons.py, drivers/indicators/sinks.py), which load without it:
#: 0.5-0.6 MB less of the daemon's memory counted once (benchmarks/bench_day_memory.py).
TABLE_ON_FIRST_USE = ("gpiozero",)


class _OnFirstUse(types.ModuleType):
    """A module whose code has not run yet: it runs when an attribute the module does not have yet
    is first asked for (the import system asks only for those it has: `__spec__`, `__name__`), and
    the module is then the module as ever, the same object."""

    def __getattr__(self, name: str) -> object:
        with _FIRST_USE:
            if type(self) is _OnFirstUse:  # not loaded meanwhile by another thread
                spec = self.__spec__
                assert spec is not None and spec.loader is not None
                self.__class__ = types.ModuleType  # type: ignore[assignment]
                try:
                    spec.loader.exec_module(self)
                except BaseException:
                    self.__class__ = _OnFirstUse
                    raise
        return getattr(self, name)  # the module as ever now (its own __getattr__ too, if it has one)


_FIRST_USE = threading.RLock()


def modules_loaded_on_first_use(names: Sequence[str] = ON_FIRST_USE) -> None:
    """Put each of `names` (not loaded yet) in `sys.modules` as a module whose code runs when it is
    first used (`_OnFirstUse`), not when it is imported: `import html` and `from http import cookies`
    give it without running it, `html.escape` runs it then. What a library gets is the same module.
    Called by the API's process before it imports its libraries (as `uvicorn_without_its_command_line`),
    and by `tablectl run`'s table's process before it loads its drivers (`TABLE_ON_FIRST_USE`);
    nothing for a module loaded already or not found here."""
    for name in names:
        if name in sys.modules:
            continue
        parent, _, child = name.rpartition(".")
        if parent:
            importlib.import_module(parent)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            continue
        module = importlib.util.module_from_spec(spec)
        module.__class__ = _OnFirstUse
        sys.modules[name] = module
        if parent:
            setattr(sys.modules[parent], child, module)  # as the import system binds a submodule


def _uvicorn_version() -> str:
    """uvicorn's version as its package says it (uvicorn._version, from 0.55), else as installed."""
    try:
        return str(importlib.import_module("uvicorn._version").__version__)
    except ImportError:
        from importlib.metadata import version

        return version("uvicorn")


class ApiChild(Protocol):
    """What the daemon does with its API's process (asyncio's Process, or a forked one)."""

    pid: int

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def kill(self) -> None: ...

    def send_signal(self, sig: int) -> None: ...


@dataclass
class Launched:
    """The API's process just started, and the table's end of its channel."""

    proc: ApiChild
    channel: socket.socket


#: What a forked API process runs (controller/app/api_process.py's `run`): (the daemon's PID, its
#: end of the channel, the listening sockets) -> its exit status.
Serve = Callable[[int, socket.socket, list[socket.socket]], int]


async def launch(sockets: Sequence[socket.socket], *, fork: Serve | None = None, game: str | None = None) -> Launched:
    """Start the API's process with the listening `sockets` and one end of a socketpair; it loads
    FastAPI and the app, then waits on the channel for what it serves. With `fork`, forked from
    this process when it has no other thread (module docstring), running `fork`, the table's `game`
    loaded first; else executed."""
    ours, theirs = socket.socketpair()
    try:
        if fork is not None and FORK and _can_fork():
            return Launched(_fork(ours, theirs, sockets, fork, game), ours)
        fds = [theirs.fileno(), *(s.fileno() for s in sockets)]
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "controller.app.api_process",
            str(os.getpid()),
            *map(str, fds),
            pass_fds=fds,
            stdin=asyncio.subprocess.DEVNULL,
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return Launched(proc, ours)


def _can_fork() -> bool:
    # Another thread could hold a lock the copy would wait on forever; a process without pidfds
    # (Linux before 5.3) is not waited for this way.
    return threading.active_count() == 1 and hasattr(os, "pidfd_open") and hasattr(os, "fork")


def _fork(
    ours: socket.socket, theirs: socket.socket, sockets: Sequence[socket.socket], serve: Serve, game: str | None
) -> ForkedProcess:
    parent = os.getpid()
    for name in PRELOAD:
        importlib.import_module(name)
    if game is not None:
        with contextlib.suppress(Exception):  # a game not installed is said where the table loads it
            from controller.games import adapter

            adapter(game)
    # What this process made so far lives as long as it does: out of the collector's sight for good,
    # in both processes, so neither's collections write to the pages they share.
    gc.freeze()
    for stream in (sys.stdout, sys.stderr):  # what was written before is written once, not once a process
        with contextlib.suppress(Exception):
            stream.flush()
    pid = os.fork()
    if pid == 0:  # the API's process: never returns into the table's code
        code = 1
        try:
            ours.close()
            asyncio.events._set_running_loop(None)  # the table's loop is the other process's: one of its own
            signal.set_wakeup_fd(-1)  # and its signals: the handlers as in a fresh process until asyncio's own
            signal.signal(signal.SIGINT, signal.default_int_handler)
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.close(devnull)
            modules_loaded_on_first_use()
            uvicorn_without_its_command_line()
            code = serve(parent, theirs, list(sockets))
        except BaseException:
            with contextlib.suppress(BaseException):
                import traceback

                traceback.print_exc()
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    return ForkedProcess(pid)


class ForkedProcess:
    """A forked API process as the daemon handles one (asyncio's Process's part it uses): waited
    for through its pidfd on the running loop, reaped here."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._pidfd = os.pidfd_open(pid)
        self._code: int | None = None
        self._ended: asyncio.Future[int] | None = None

    @property
    def returncode(self) -> int | None:
        return self._code

    async def wait(self) -> int:
        if self._code is not None:
            return self._code
        if self._ended is None:
            loop = asyncio.get_running_loop()
            self._ended = loop.create_future()
            loop.add_reader(self._pidfd, self._reap)
        return await asyncio.shield(self._ended)

    def _reap(self) -> None:
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else: ended, its status unknown
            pid, status = self.pid, -1
        if pid == 0:
            return  # not yet (a spurious wake)
        self._code = os.waitstatus_to_exitcode(status) if status >= 0 else -1
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(self._code)

    def send_signal(self, sig: int) -> None:
        if self._code is None:
            os.kill(self.pid, sig)  # not reaped yet: the PID is still this child's

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

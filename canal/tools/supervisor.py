"""A stdio MCP server never outlives canal: canal starts it through this tiny supervisor.

canal runs ``python -I -S supervisor.py <canal pid> <command> <args...>`` instead of the
server's command. The supervisor starts the server as its child, on the same stdin, stdout
and stderr (it never reads or writes them itself), and then only waits:

* the server exits: the supervisor exits with the server's code;
* canal goes away, even by SIGKILL, or the supervisor gets SIGTERM, SIGHUP or SIGINT (the MCP
  SDK's own shutdown sends SIGTERM to the process group): it sends SIGTERM to its process
  group (the server and whatever the server started), gives it ``GRACE`` seconds, then
  SIGKILL, and exits.

Why: a stdio server is told that its client is gone only by an end of file on stdin, and
many servers do not look at stdin while a tool runs (a synchronous handler), or ignore the
end of file altogether. Such a server outlived a killed canal, and then wrote its
``BrokenPipeError`` traceback wherever its stderr went.

How canal's death is noticed: on Linux, ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` makes the
kernel signal the supervisor the moment the thread that started it ends (canal's MCP event
loop thread, which lives until canal closes its sessions, or the process dies). Elsewhere on
POSIX (macOS, the BSDs), a thread checks every ``POLL`` seconds whether the parent changed.
Windows is not supervised: canal starts servers directly there (the SDK puts them in a job
object), so this guarantee is POSIX-only. A server that puts itself in a new session or
process group escapes the group signal; the server process itself is always stopped.

This file runs with the standard library only (``-I -S``: no site-packages, no canal).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

GRACE = 2.0  # seconds between SIGTERM and SIGKILL
POLL = 0.5   # seconds between parent checks where PR_SET_PDEATHSIG does not exist
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT) if os.name == "posix" else ()
PR_SET_PDEATHSIG = 1


def supervised(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The command and arguments that run ``command args`` under this supervisor, for the
    current process as the parent; unchanged where supervision is not available."""
    if os.name != "posix" or not sys.executable:
        return command, args
    return sys.executable, ["-I", "-S", str(Path(__file__).resolve()), str(os.getpid()),
                            command, *args]


class _Stop(Exception):
    """Raised in the main thread by a stop signal."""


def _raise_stop(signum: int, frame: object) -> None:
    for number in _STOP_SIGNALS:  # a second signal must not cut the stop short
        signal.signal(number, signal.SIG_IGN)
    raise _Stop


def _watch_parent(parent: int) -> None:
    """Signal this process when ``parent`` is gone: at once on Linux, else by polling."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) == 0
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != parent:  # gone before the watch was armed
        os.kill(os.getpid(), signal.SIGTERM)
        return
    if armed:
        return

    def poll() -> None:
        while os.getppid() == parent:
            time.sleep(POLL)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=poll, name="watch-parent", daemon=True).start()


def _signal_all(child: subprocess.Popen[bytes] | None, number: int) -> None:
    """``number`` to the supervisor's own process group, or to the child alone when the
    supervisor could not get a group of its own (never to canal's group)."""
    try:
        if os.getpgrp() == os.getpid():
            os.killpg(0, number)
        elif child is not None:
            child.send_signal(number)
    except OSError:
        pass


def _stop(child: subprocess.Popen[bytes] | None) -> int:
    """SIGTERM to the server and its processes, SIGKILL after ``GRACE``; the exit code."""
    for number in _STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    _signal_all(child, signal.SIGTERM)
    try:
        return child.wait(GRACE) if child is not None else 1
    except subprocess.TimeoutExpired:
        _signal_all(child, signal.SIGKILL)  # the supervisor too: nothing is left to do
        return -signal.SIGKILL


def main(argv: list[str]) -> int:
    parent, command = int(argv[1]), argv[2:]
    if os.getpgrp() != os.getpid():  # the SDK starts a new session; be sure of a group
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
    child = None
    try:
        for number in _STOP_SIGNALS:
            signal.signal(number, _raise_stop)
        _watch_parent(parent)
        try:
            child = subprocess.Popen(command)
        except OSError as exc:
            print(f"canal: cannot start {command[0]!r}: {exc}", file=sys.stderr, flush=True)
            return 127
        code = child.wait()
    except _Stop:
        code = _stop(child)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))

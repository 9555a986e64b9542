"""While canal holds MCP servers, a signal that would end the process on the spot unwinds it.

SIGTERM and SIGHUP (and SIGINT where Python's ``KeyboardInterrupt`` handler was replaced by
the default action) end a Python process without running any ``finally``: the servers canal
started were left to notice on their own. ``StopSignals`` gives those signals, for as long
as ``McpConnections`` holds sessions, a handler that raises ``canal.errors.Terminated`` in
the main thread instead, so the code holding the sessions unwinds, closes them (the servers
exit) and the CLI prints its error document. SIGINT with Python's own handler already
raises ``KeyboardInterrupt``, which unwinds the same way.

Only a signal whose action is the default is taken over: a handler someone else installed
(a server embedding canal) and an ignored signal are left alone. The first signal restores
the previous actions, so a second one ends the process as it always did (the supervisor,
``canal.tools.supervisor``, still stops the servers then). Handlers can only be set from
the main thread: elsewhere this does nothing.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from canal.errors import Terminated

_NAMES = ("SIGTERM", "SIGHUP", "SIGINT")


class StopSignals:
    """Installs the handlers on ``install`` and puts the previous ones back on ``restore``."""

    def __init__(self) -> None:
        self._saved: dict[int, Any] = {}

    def install(self) -> None:
        if self._saved or threading.current_thread() is not threading.main_thread():
            return
        for name in _NAMES:
            number = getattr(signal, name, None)
            if number is not None and signal.getsignal(number) is signal.SIG_DFL:
                self._saved[number] = signal.signal(number, self._raise)

    def restore(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        saved, self._saved = self._saved, {}
        for number, handler in saved.items():
            if signal.getsignal(number) == self._raise:
                signal.signal(number, handler)

    def _raise(self, number: int, frame: object) -> None:
        self.restore()
        raise Terminated(number)

"""Where a stdio MCP server's stderr goes: ``<home>/logs/<server>.log``, never the terminal.

A server's stderr holds its warnings and, when it dies, its traceback: useful to whoever
debugs the server, noise (thousands of characters) to an agent reading canal's output. Each
start appends a header line to the server's log and hands the file to the server as its
stderr. The folder is 0700 and the file 0600, like everything in canal's home
(``canal.files``). A log that has grown past ``MAX_BYTES`` is moved to ``<server>.log.1``
(replacing the previous one) at the next start.

An error about the server names the log and quotes its last lines from this start
(``pointer``), with the values of the server's ``env`` blanked out.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TextIO

from canal.files import private_dir, private_file
from canal.tools.servers import ServerConfig

MAX_BYTES = 1_000_000
TAIL_LINES = 3
TAIL_CHARS = 300


class ServerLog:
    """The log file of one stdio server, in ``folder``."""

    def __init__(self, folder: Path, config: ServerConfig) -> None:
        self.path = folder / f"{config.name}.log"  # server names are safe file names
        self.config = config
        self._start = 0

    def open(self) -> TextIO:
        """The file to give the server as its stderr, a header line written for this start."""
        private_dir(self.path.parent)
        try:
            if self.path.stat().st_size > MAX_BYTES:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        except FileNotFoundError:
            pass
        private_file(self.path)
        handle = self.path.open("a", encoding="utf-8", errors="replace")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        handle.write(f"--- {stamp} canal (pid {os.getpid()}) starts "
                     f"{self.config.describe()}\n")
        handle.flush()
        self._start = handle.tell()
        return handle

    def tail(self) -> str:
        """The last few lines the server wrote since this start, secrets blanked."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._start)
                text = handle.read()[-64 * 1024:].decode("utf-8", "replace")
        except OSError:
            return ""
        for value in (self.config.env or {}).values():
            if len(value) >= 4:
                text = text.replace(value, "***")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        words = " | ".join(lines[-TAIL_LINES:])
        return words if len(words) <= TAIL_CHARS else "..." + words[-TAIL_CHARS:]

    def pointer(self) -> str:
        """What an error about the server ends with: its last words, and the log's path."""
        words = self.tail()
        return (f'; its stderr ends: "{words}"' if words else "") + f"; see {self.path}"

"""Named points where a test can kill canal's process, to prove a crash there loses nothing.

``CANAL_FAILPOINTS=after-call:create-role,before-call:x`` makes the process SIGKILL itself
when it reaches one of those points. Unset (always, outside tests) it costs one lookup.
"""

from __future__ import annotations

import os
import signal


def failpoint(name: str) -> None:
    points = os.environ.get("CANAL_FAILPOINTS")
    if points and name in points.split(","):
        os.kill(os.getpid(), signal.SIGKILL)

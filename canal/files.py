"""Files canal makes in its home (state databases, the key, the tool cache, lock files)
are the owner's only: folders 0700, files 0600, whatever the umask says.

A folder or file that exists already keeps its mode: it was made by someone on purpose.
"""

from __future__ import annotations

import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> None:
    """Make ``path`` and every missing folder above it, each owner-only."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # made by another process meanwhile
        os.chmod(folder, DIR_MODE)  # mkdir's mode is cut by the umask


def private_file(path: Path) -> None:
    """Make ``path`` an empty owner-only file if there is none (its folder must exist)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return
    os.fchmod(fd, FILE_MODE)
    os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (a reader never sees half a file), as an
    owner-only file."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)

"""Encryption at rest: every checkpoint and every journaled tool outcome is sealed with
AES-256-GCM before it reaches a database (SQLite file and WAL, PostgreSQL rows).

The key is ``CANAL_ENCRYPTION_KEY`` (32 bytes, URL-safe base64, as ``canal key`` prints),
else the file ``<home>/key``, created on first write with owner-only permissions, but never
while the store already holds runs (the key was lost: a new one could not read them). A
state written with one key and read with another, or read with no key at all, is a
``ConfigError`` that says so, never garbage.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from canal.errors import ConfigError
from canal.files import private_dir

KEY_ENV = "CANAL_ENCRYPTION_KEY"
CIPHER = "aesgcm"
DIGEST_KEY_LABEL = b"canal call-journal argument digest v1"  # derives the HMAC key


def new_key() -> str:
    """A fresh key in the form ``CANAL_ENCRYPTION_KEY`` takes."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def _decode(text: str, source: str) -> bytes:
    try:
        key = base64.urlsafe_b64decode(text.strip().encode())
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{source} is not URL-safe base64") from exc
    if len(key) != 32:
        raise ConfigError(f"{source} must hold 32 bytes (URL-safe base64 of 32 random bytes)")
    return key


def load_key(home: Path, create: bool) -> bytes | None:
    """The key from the environment or ``<home>/key``; created there when ``create`` and
    absent, else None when absent."""
    if os.environ.get(KEY_ENV):
        return _decode(os.environ[KEY_ENV], KEY_ENV)
    path = home / "key"
    if path.exists() or path.is_symlink():
        return _read_key(path)
    if not create:
        return None
    private_dir(home)
    # Written aside, then linked into place: the key file appears whole or not at all, and
    # when two processes race, both end up with the one that was linked first.
    tmp = home / f".key.{os.getpid()}.{threading.get_ident()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(new_key() + "\n")
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    if not path.is_file():
        raise ConfigError(f"{path} is not a file: the key file must be a file holding the key "
                          f"(or set {KEY_ENV})")
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read the key file {path}: {exc.strerror}") from exc
    return _decode(text, str(path))


class Sealer:
    """AES-GCM with the home's key (loaded on first use); also a LangGraph
    ``CipherProtocol``. Writing creates the key file if there is none; reading never does."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self._key: bytes | None = None
        self._lock = threading.Lock()  # LangGraph serializes from several threads

    @classmethod
    def ephemeral(cls) -> Sealer:
        """A sealer with a fresh key that lives only in this object (for ``memory:`` state,
        which never leaves the process: no key file is made)."""
        sealer = cls(Path("."))
        sealer._key = os.urandom(32)
        return sealer

    def refuse_new_key(self, has_state: Callable[[], bool], state: str) -> None:
        """ConfigError when there is no key yet but ``has_state()`` says encrypted state
        exists: a new key would be made on the next write, and the old state could never be
        read again. ``state`` says where it is (for a person who wants to start afresh)."""
        if self._key is not None or os.environ.get(KEY_ENV):
            return
        path = self._home / "key"
        if path.exists() or path.is_symlink() or not has_state():
            return
        raise ConfigError(
            f"there is no encryption key ({path} is missing and {KEY_ENV} is not set), but "
            f"the state holds encrypted runs that a new key could never read: restore {path} "
            f"or set {KEY_ENV} to the key they were written with; to start afresh instead, "
            f"move {state} away")

    def _secret(self, create: bool) -> bytes:
        with self._lock:
            if self._key is None:
                self._key = load_key(self._home, create)
        if self._key is None:
            raise ConfigError(f"the saved state is encrypted and there is no key: set "
                              f"{KEY_ENV} or restore {self._home / 'key'}")
        return self._key

    def _aead(self, create: bool) -> Any:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        return AESGCM(self._secret(create))

    def digest_text(self, text: str) -> str:
        """A keyed digest of ``text`` (HMAC-SHA256 under a key derived from canal's key):
        equal texts give equal digests, and without the key a short secret inside the text
        cannot be found by hashing every candidate."""
        mac_key = hmac.new(self._secret(create=True), DIGEST_KEY_LABEL, hashlib.sha256).digest()
        return "hmac-sha256:" + hmac.new(mac_key, text.encode(), hashlib.sha256).hexdigest()

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        nonce = os.urandom(12)
        return CIPHER, nonce + self._aead(create=True).encrypt(nonce, plaintext, None)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        from cryptography.exceptions import InvalidTag

        if ciphername != CIPHER:
            raise ConfigError(f"the saved state uses an unknown cipher {ciphername!r}")
        try:
            return self._aead(create=False).decrypt(ciphertext[:12], ciphertext[12:], None)
        except InvalidTag as exc:
            raise ConfigError(f"cannot decrypt the saved state: it was written with another "
                              f"key than {KEY_ENV} or {self._home / 'key'} holds") from exc

    def seal_text(self, text: str) -> str:
        """``text`` sealed, as ASCII that fits a TEXT or JSON column."""
        _, data = self.encrypt(text.encode())
        return f"{CIPHER}:" + base64.b64encode(data).decode()

    def open_text(self, sealed: str) -> str:
        name, _, data = sealed.partition(":")
        return self.decrypt(name, base64.b64decode(data)).decode()

    def serde(self) -> Any:
        """A LangGraph serializer that seals everything it writes."""
        from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        return EncryptedSerializer(self, JsonPlusSerializer())

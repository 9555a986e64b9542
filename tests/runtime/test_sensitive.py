"""Sensitive gate fields: real values for tools, masks on screen, ciphertext on disk."""

from __future__ import annotations

import json

import pytest

from canal import Canal, ConfigError, PythonTools
from canal.crypto import new_key
from canal.nodes.sensitive import MASK, redact
from tests.conftest import write_workflow

SECRET = "s3cr3t-Token-9f8e7d"


def steps() -> dict:
    return {
        "01-login.md": ({"type": "interactive", "gate": {"schema": {
            "user": {"type": "string", "required": True},
            "api_token": {"type": "string", "required": True, "sensitive": True},
            "pin": {"type": "integer", "sensitive": True}}}}, "Ask for the token."),
        "02-connect.md": {"type": "automated", "automation": {
            "tool": "connect", "input_mapping": {
                "user": "{{gate.login.user}}", "token": "{{gate.login.api_token}}",
                "header": "Bearer {{gate.login.api_token}}", "pin": "{{gate.login.pin}}"}}},
        "03-done.md": ({"type": "notification"},
                       "Connected as {{gate.login.user}} with {{result.connect.echo}}."),
    }


@pytest.fixture
def received():
    return []


@pytest.fixture
def make(workflows, tmp_path, checkpointer, received):
    write_workflow(workflows, "login", steps())

    def connect(**kwargs):
        received.append(kwargs)
        return {"echo": kwargs["token"], "session": "ok"}

    def make() -> Canal:
        return Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer=checkpointer,
                     tools=PythonTools({"connect": connect}))

    return make


def every_output(canal: Canal, thread: str) -> str:
    return json.dumps([canal.current(thread).to_json(), canal.history(thread), canal.runs(),
                       repr(canal.current(thread))])


def test_tools_get_the_secret_and_no_output_shows_it(make, received):
    canal = make()
    canal.start("login", thread_id="t")
    env = canal.advance("t", {"user": "ann", "api_token": SECRET, "pin": 4321})
    assert received == [{"user": "ann", "token": SECRET, "header": f"Bearer {SECRET}",
                         "pin": 4321}]
    shown = env.to_json()
    assert SECRET not in json.dumps(shown) and "4321" not in json.dumps(shown)
    assert shown["executed"][0]["arguments"] == {"user": "ann", "token": MASK,
                                                 "header": f"Bearer {MASK}", "pin": MASK}
    assert shown["executed"][0]["result"]["echo"] == MASK
    assert shown["step"]["instructions"] == f"Connected as ann with {MASK}."
    later = make()
    assert SECRET not in every_output(later, "t")
    assert later.current("t").to_json()["completed"][0]["data"]["api_token"] == MASK


def test_short_secrets_are_masked_only_where_they_stand_alone(make):
    canal = make()
    canal.start("login", thread_id="t")
    env = canal.advance("t", {"user": "ann", "api_token": "abc", "pin": 7})
    shown = env.to_json()
    assert shown["executed"][0]["arguments"]["token"] == MASK
    # The log keeps the sealed value, so even a short secret inside a text is masked there.
    assert shown["executed"][0]["arguments"]["header"] == f"Bearer {MASK}"
    assert shown["executed"][0]["arguments"]["pin"] == MASK
    assert redact({"note": "abcdef", "pin": 7, "n": 17}, ["abc", 7]) == {
        "note": "abcdef", "pin": MASK, "n": 17}  # too short to hunt inside other values


def test_nothing_on_disk_holds_the_secret(workflows, tmp_path, received):
    write_workflow(workflows, "login", steps())
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", tools=PythonTools(
        {"connect": lambda **kw: (received.append(kw), {"echo": kw["token"]})[1]}))
    canal.start("login", thread_id="t")
    canal.advance("t", {"user": "ann", "api_token": SECRET})
    assert received[0]["token"] == SECRET
    files = [p for p in (tmp_path / ".canal").rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"state.db", "key"}
    assert any(p.name == "state.db-wal" for p in files), "the WAL is checked too"
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert canal.current("t").status == "awaiting_input"
    canal.close()


def test_nothing_in_postgres_rows_holds_the_secret(workflows, tmp_path, postgres_schema_url):
    import psycopg

    url = postgres_schema_url()
    write_workflow(workflows, "login", steps())
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer=url,
                  tools=PythonTools({"connect": lambda **kw: {"echo": kw["token"]}}))
    canal.start("login", thread_id="t")
    canal.advance("t", {"user": "ann", "api_token": SECRET})
    canal.close()
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()")]
        assert {"checkpoints", "checkpoint_blobs", "checkpoint_writes", "canal_calls"} <= set(tables)
        for table in tables:
            dump = conn.execute(f"SELECT t::text FROM {table} t").fetchall()
            assert SECRET not in json.dumps([r[0] for r in dump]), table
            assert SECRET.encode().hex() not in json.dumps([r[0] for r in dump]), table


def test_a_key_file_is_made_owner_only(workflows, tmp_path):
    write_workflow(workflows, "login", steps())
    Canal(workflows=workflows, home=tmp_path / ".canal").start("login", thread_id="t")
    key = tmp_path / ".canal" / "key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / ".canal").stat().st_mode & 0o077 == 0


def test_a_wrong_or_missing_key_is_a_clear_error(workflows, tmp_path, monkeypatch):
    write_workflow(workflows, "login", steps())
    monkeypatch.setenv("CANAL_ENCRYPTION_KEY", new_key())
    Canal(workflows=workflows, home=tmp_path / "h").start("login", thread_id="t")
    monkeypatch.setenv("CANAL_ENCRYPTION_KEY", new_key())
    with pytest.raises(ConfigError, match="cannot decrypt the saved state: it was written with "
                                          "another key"):
        Canal(workflows=workflows, home=tmp_path / "h").current("t")
    monkeypatch.delenv("CANAL_ENCRYPTION_KEY")
    with pytest.raises(ConfigError, match="there is no encryption key .* but the state holds "
                                          "encrypted runs"):
        Canal(workflows=workflows, home=tmp_path / "h").current("t")
    assert not (tmp_path / "h" / "key").exists(), "reading never creates a key"


@pytest.mark.parametrize("value, message", [
    ("c2hvcnQ=", "must hold 32 bytes"), ("not base64 !!", "is not URL-safe base64")])
def test_a_malformed_key(workflows, tmp_path, monkeypatch, value, message):
    write_workflow(workflows, "login", steps())
    monkeypatch.setenv("CANAL_ENCRYPTION_KEY", value)
    with pytest.raises(ConfigError, match=message):
        Canal(workflows=workflows, home=tmp_path / "h").start("login", thread_id="t")

"""Sensitive gate fields: real values for tools, masks on screen, ciphertext on disk."""

from __future__ import annotations

import json

import pytest

from canal import Canal, ConfigError, PythonTools
from canal.crypto import new_key
from canal.nodes.masking import MASK, Masker
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
    # Too short to hunt inside other values; a short number is not even hunted alone.
    assert Masker.of(["abc", 7]).value({"note": "abcdef", "same": "abc", "pin": 7}) == {
        "note": "abcdef", "same": MASK, "pin": 7}


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


# -- sensitive lists and objects --------------------------------------------------------

CREDS = {"user": "svc-deployer", "password": "hunter2-Pa55word", "pin": 12, "port": 5432,
         "admin": True}
KEYS = ["recovery-code-1111", "recovery-code-2222", "ab"]


def vault_steps() -> dict:
    return {
        "01-ask.md": ({"type": "interactive", "gate": {"schema": {
            "creds": {"type": "object", "required": True, "sensitive": True},
            "keys": {"type": "array", "required": True, "sensitive": True}}}}, "Ask."),
        "02-open.md": {"type": "automated", "automation": {"tool": "open_vault", "input_mapping": {
            "password": "{{gate.ask.creds.password}}", "creds": "{{gate.ask.creds}}",
            "first": "{{gate.ask.keys[0]}}",
            "note": "creds {{gate.ask.creds}} keys {{gate.ask.keys}}"}}},
        "03-done.md": ({"type": "notification"},
                       "Opened with {{gate.ask.creds}} and {{gate.ask.keys}}; "
                       "the vault said {{result.open.echo}}"),
    }


def strings_of(document) -> list[str]:
    """Every string (and key) inside a document, and its repr."""
    found = [repr(document)]
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(map(str, item))
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found


def leaked(documents, needles) -> list[str]:
    return sorted({n for n in needles for s in strings_of(documents) if n in s})


@pytest.fixture
def vault(workflows, tmp_path, checkpointer, received):
    write_workflow(workflows, "vault", vault_steps())

    def open_vault(**kwargs):
        received.append(kwargs)
        return {"echo": kwargs}

    def make() -> Canal:
        return Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer=checkpointer,
                     tools=PythonTools({"open_vault": open_vault}))

    return make


def test_every_leaf_of_a_sensitive_object_or_list_is_masked(vault, received):
    canal = vault()
    canal.start("vault", thread_id="t")
    env = canal.advance("t", {"creds": CREDS, "keys": KEYS})
    rendered = json.dumps(CREDS, ensure_ascii=False, separators=(",", ":"))
    assert received == [{"password": CREDS["password"], "creds": CREDS, "first": KEYS[0],
                         "note": f"creds {rendered} keys "
                                 f"{json.dumps(KEYS, separators=(',', ':'))}"}]
    shown = env.to_json()
    assert shown["status"] == "awaiting_input", shown["errors"]
    masked_creds = dict.fromkeys(CREDS, MASK)
    assert shown["executed"][0]["arguments"] == {
        "password": MASK, "creds": masked_creds, "first": MASK,
        "note": "creds " + json.dumps(masked_creds, separators=(",", ":"))
                + ' keys ["********","********","********"]'}
    later = vault()
    documents = [shown, env.__repr__(), later.current("t").to_json(), later.history("t"),
                 later.runs(), repr(later.current("t"))]
    secrets = [v for v in [*CREDS.values(), *KEYS] if isinstance(v, str) and len(v) > 2]
    whole = [json.dumps(v, ensure_ascii=a, separators=s) for v in (CREDS, KEYS)
             for a in (True, False) for s in ((",", ":"), (", ", ": "))] + [repr(CREDS),
                                                                          repr(KEYS)]
    assert leaked(documents, secrets + whole + ['"ab"', "5432"]) == []
    assert later.current("t").to_json()["completed"][0]["data"] == {
        "creds": masked_creds, "keys": [MASK, MASK, MASK]}
    instructions = shown["step"]["instructions"]
    assert instructions.startswith("Opened with " + json.dumps(masked_creds, separators=(
        ",", ":")) + ' and ["********","********","********"]; the vault said {'), instructions


def test_a_sensitive_list_keeps_working_in_a_later_step(vault, received):
    """Items of a sealed list and keys of a sealed object resolve like any other value."""
    canal = vault()
    canal.start("vault", thread_id="t")
    vault().advance("t", {"creds": {"password": "x"}, "keys": ["only-one-key"]})
    assert received[0]["first"] == "only-one-key" and received[0]["password"] == "x"
    assert vault().advance("t", {}).status == "completed"


# -- masking rewrites only data, never the document's own fields ------------------------

def deploy_steps() -> dict:
    return {
        "01-ask.md": ({"type": "interactive", "gate": {"schema": {
            "target": {"type": "string", "required": True, "sensitive": True},
            "force": {"type": "boolean", "required": True, "sensitive": True},
            "pin": {"type": "integer", "required": True, "sensitive": True}}}},
                      "Where to deploy?"),
        "02-prod-check.md": {"type": "automated", "automation": {
            "tool": "prod_check", "input_mapping": {
                "target": "{{gate.ask.target}}", "force": "{{gate.ask.force}}",
                "pin": "{{gate.ask.pin}}", "label": "to {{gate.ask.target}}"}}},
        "03-approve.md": ({"type": "interactive", "gate": {"schema": {
            "ok": {"type": "boolean", "required": True}}}}, "Approve {{result.prod-check.name}}."),
        "04-done.md": ({"type": "notification"}, "Deployed."),
    }


def prod_check(**kwargs):
    return {"name": f"{kwargs['target']}-release", "created": True, "count": 7,
            "ids": [True, 7]}


def test_masking_never_rewrites_the_documents_own_fields(workflows, tmp_path, checkpointer):
    write_workflow(workflows, "deploy-prod", deploy_steps())

    def make() -> Canal:
        return Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer=checkpointer,
                     tools=PythonTools({"prod_check": prod_check}))

    make().start("deploy-prod", thread_id="deploy-prod-7")
    shown = make().advance("deploy-prod-7", {"target": "prod", "force": True, "pin": 7}).to_json()
    assert shown["thread_id"] == "deploy-prod-7" and shown["workflow"] == "deploy-prod"
    assert shown["status"] == "awaiting_input" and shown["step"]["id"] == "approve"
    assert shown["step"]["gate"] == {"ok": {"type": "boolean", "required": True}}
    assert shown["step"]["instructions"] == "Approve ********-release."
    [call] = shown["executed"]
    assert call["step"] == "prod-check" and call["tool"] == "prod_check"
    assert call["ok"] is True and call["key"] == "deploy-prod-7:prod-check:0"
    assert call["arguments"] == {"target": MASK, "force": MASK, "pin": MASK,
                                 "label": f"to {MASK}"}
    # Booleans and short numbers are masked only where they stand as the field's value.
    assert call["result"] == {"name": f"{MASK}-release", "created": True, "count": 7,
                              "ids": [True, 7]}
    current = make().current("deploy-prod-7").to_json()
    assert current["thread_id"] == "deploy-prod-7" and current["missing"] == ["ok"]
    assert current["completed"][0] == {"step": "ask", "type": "interactive",
                                       "data": {"target": MASK, "force": MASK, "pin": MASK}}
    assert current["definition"]["changed"] is False
    history = make().history("deploy-prod-7")
    assert history["thread_id"] == "deploy-prod-7" and history["workflow"] == "deploy-prod"
    assert [e["step"] for e in history["entries"]][1:3] == ["ask", "prod-check"]
    assert history["entries"][2]["ok"] is True
    assert make().runs()[0]["thread_id"] == "deploy-prod-7"
    done = make().advance("deploy-prod-7", {"ok": True}).to_json()
    assert done["thread_id"] == "deploy-prod-7" and done["step"]["id"] == "done"


def test_canal_run_keeps_its_thread_id_when_a_secret_is_part_of_it(cli, project):
    write_workflow(project / "workflows", "deploy", {
        "01-ask.md": ({"type": "interactive", "gate": {"schema": {
            "target": {"type": "string", "required": True, "sensitive": True},
            "force": {"type": "boolean", "required": True, "sensitive": True}}}}, "Where?"),
        "02-prod-check.md": ({"type": "interactive", "gate": {"schema": {
            "ok": {"type": "boolean", "required": True}}}}, "Sure?"),
        "03-done.md": ({"type": "notification"}, "Deployed."),
    })
    first = project / "first.yaml"
    first.write_text("ask: {target: prod, force: true}\n")
    stopped = cli("run", "deploy", "--thread-id", "deploy-prod-7", "--answers", str(first))
    assert stopped.code == 2, stopped.stderr
    assert stopped.json["thread_id"] == "deploy-prod-7"
    assert stopped.json["step"]["id"] == "prod-check"
    assert stopped.json["step"]["gate"]["ok"]["required"] is True
    every = project / "every.yaml"
    every.write_text("ask: {target: prod, force: true}\nprod-check: {ok: true}\n")
    resumed = cli("run", "deploy", "--thread-id", "deploy-prod-7", "--answers", str(every))
    assert resumed.code == 0, resumed.stderr
    assert resumed.json["status"] == "completed" and resumed.json["thread_id"] == "deploy-prod-7"
    assert cli("current", "deploy-prod-7").json["status"] == "completed"


# -- escaped forms of a secret -----------------------------------------------------------

def escaped_forms(secret: str) -> set[str]:
    return {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
            repr(secret)[1:-1]}


@pytest.mark.parametrize("secret", [
    'quote"and\\back-slash', "tab\tnew\nline-x", "pässwörd-ünïcode", "it's a \x07 bell",
    "both ' and \" quotes"])
def test_escaped_forms_of_a_secret_are_masked(workflows, tmp_path, secret):
    write_workflow(workflows, "leaky", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "token": {"type": "string", "required": True, "sensitive": True}}}},
        "02-leak.md": {"type": "automated", "automation": {
            "tool": "leak", "input_mapping": {"token": "{{gate.ask.token}}"}}},
        "03-show.md": ({"type": "notification"},
                       "{{result.leak.obj}} {{result.leak.ascii}} {{result.leak.text}}"),
        "04-boom.md": {"type": "automated", "automation": {
            "tool": "boom", "input_mapping": {"token": "{{gate.ask.token}}"}}},
    })

    def leak(token):
        return {"obj": {"token": token}, "ascii": json.dumps(token),
                "text": json.dumps({"t": token}, ensure_ascii=False), "repr": repr(token)}

    def boom(token):
        raise ValueError(f"bad token {token!r} in {json.dumps({'token': token})}")

    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"leak": leak, "boom": boom}))
    canal.start("leaky", thread_id="t")
    shown = canal.advance("t", {"token": secret}).to_json()
    assert shown["step"]["id"] == "show"
    failed = canal.advance("t", {"ack": True}).to_json()
    assert failed["status"] == "failed" and failed["errors"][0]["message"].startswith(
        "boom: ValueError: bad token ")
    documents = [shown, failed, canal.current("t").to_json(), canal.history("t")]
    assert leaked(documents, escaped_forms(secret)) == []


# -- errors about a sensitive field never echo its value ---------------------------------

SENSITIVE_KINDS = {"integer": "98x76", "number": "12.5.7x", "boolean": "perhaps-xyzzy",
                   "object": '{"pw": "xyzzy-pass"', "array": '["xyzzy-pass"'}


def test_canal_run_never_echoes_a_mistyped_secret(cli, project):
    write_workflow(project / "workflows", "typed", {"01-ask.md": {
        "type": "interactive", "gate": {"schema": {
            kind: {"type": kind, "required": True, "sensitive": True}
            for kind in SENSITIVE_KINDS}}}})
    good = {"integer": "9876", "number": "1.5", "boolean": "y", "object": '{"pw": "ok-pass"}',
            "array": '["ok-pass"]'}
    typed = "".join(f"{bad}\n{good[kind]}\n" for kind, bad in SENSITIVE_KINDS.items())
    result = cli("run", "typed", stdin=typed)
    assert result.code == 0 and result.json["status"] == "completed", result.stderr
    for kind, bad in SENSITIVE_KINDS.items():
        assert f"not a {kind}\n" in result.stderr
        assert bad not in result.stderr + result.stdout
        assert bad.strip('{["').split('"')[0] not in result.stderr


@pytest.mark.parametrize("field, value", [
    ({"type": "integer"}, "98x76-secret"), ({"type": "string", "enum": ["a", "b"]}, "secret-c"),
    ({"type": "string", "pattern": "^[0-9]+$"}, "secret-abc"),
    ({"type": "string", "min": 20}, "short-secret"), ({"type": "string", "max": 3}, "long-secret"),
    ({"type": "integer", "max": 10}, 98765), ({"type": "array", "max": 1}, ["secret-1", "s-2"]),
    ({"type": "object"}, ["secret-in-a-list"])])
def test_rejections_of_a_sensitive_field_never_echo_it(cli, project, field, value):
    write_workflow(project / "workflows", "typed", {"01-ask.md": {
        "type": "interactive", "gate": {"schema": {
            "secret": {**field, "required": True, "sensitive": True}}}}})
    thread = cli("start", "typed").json["thread_id"]
    answers = project / "answers.json"
    answers.write_text(json.dumps({"ask": {"secret": value}}))
    needles = [json.dumps(value), *(v for v in (value if isinstance(value, list) else [value]))]
    for result in (cli("advance", thread, "--gate-data", json.dumps({"secret": value})),
                   cli("run", "typed", "--answers", str(answers))):
        assert result.code == 3 and result.json["status"] == "rejected"
        assert result.json["errors"][0]["field"] == "secret"
        assert leaked([result.stdout, result.stderr], map(str, needles)) == []


@pytest.mark.parametrize("content, where", [
    ('ask: {secret: 98x76-xyzzy, other: "open\n', "line 2, column 1"),
    ("ask:\n  secret: 98x76-xyzzy\n   other: 1\n", "line 3, column 9")])
def test_a_broken_answers_file_is_reported_without_quoting_it(cli, project, content, where):
    write_workflow(project / "workflows", "typed", {"01-ask.md": {
        "type": "interactive", "gate": {"schema": {
            "secret": {"type": "string", "required": True, "sensitive": True}}}}})
    answers = project / "answers.yaml"
    answers.write_text(content)
    result = cli("run", "typed", "--answers", str(answers))
    assert result.code == 2 and "xyzzy" not in result.stdout + result.stderr
    message = result.json["error"]["message"]
    assert message.startswith(f"--answers: cannot read {answers}: ") and where in message
    assert cli("runs").json["count"] == 0


def test_canal_run_takes_a_secret_text_that_looks_like_json(cli, project):
    write_workflow(project / "workflows", "typed", {"01-ask.md": {
        "type": "interactive", "gate": {"schema": {
            "secret": {"type": "string", "required": True, "sensitive": True}}}}})
    result = cli("run", "typed", stdin='{pa55"word\n')
    assert result.code == 0 and result.json["status"] == "completed", result.stderr
    assert "pa55" not in result.stdout + result.stderr


def test_the_journal_keeps_a_keyed_digest_of_the_arguments(workflows, tmp_path, monkeypatch):
    """An argument digest an attacker can recompute gives a short secret away (every 6-digit
    PIN hashed in seconds): the journal keeps an HMAC under a key derived from canal's."""
    import hashlib

    write_workflow(workflows, "login", steps())
    received: list[dict] = []
    answer = {"user": "ann", "api_token": SECRET, "pin": 123456}
    digests = []
    for key in (new_key(), new_key(), None):
        if key:  # two keys from the environment, then the home's key file
            monkeypatch.setenv("CANAL_ENCRYPTION_KEY", key)
        else:
            monkeypatch.delenv("CANAL_ENCRYPTION_KEY")
        home = tmp_path / f"h{len(digests)}"  # (a home's state is written with one key)
        with Canal(workflows=workflows, home=home, tools=PythonTools(
                {"connect": lambda **kw: (received.append(kw), {"echo": "ok"})[1]})) as canal:
            thread = f"t{len(digests)}"
            canal.start("login", thread_id=thread)
            canal.advance(thread, answer)
            digests.append(canal.store.call_record(thread, f"{thread}:connect:0")["digest"])
    assert received[0] == received[1] == received[2]
    plain = hashlib.sha256(json.dumps(received[0], sort_keys=True,
                                      separators=(",", ":")).encode()).hexdigest()
    assert all(plain not in d for d in digests)
    assert len(set(digests)) == 3  # another key, another digest
    assert digests[0].startswith("hmac-sha256:") and len(digests[0]) == len(digests[2])
    for path in tmp_path.glob("h*/**/*"):
        if path.is_file():
            assert plain.encode() not in path.read_bytes(), path


def test_a_failed_read_back_never_shows_or_keeps_an_expected_secret(workflows, tmp_path):
    from canal.nodes.masking import is_sealed

    flow = steps()
    flow["02-connect.md"] = {**flow["02-connect.md"], "verify": {
        "tool": "whoami", "input_mapping": {"session": "{{result.connect.session}}"},
        "expect": {"token": "{{gate.login.api_token}}"}}}
    write_workflow(workflows, "login", flow)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"connect": lambda **kw: {"session": "ok"},
                                     "whoami": lambda **kw: {"token": "someone-else"}}))
    canal.start("login", thread_id="t")
    env = canal.advance("t", {"user": "ann", "api_token": SECRET})
    assert env.status == "failed" and env.errors[0]["code"] == "postcondition_failed"
    shown = env.to_json()["errors"][0]
    assert shown["errors"] == [{"path": "token", "expected": MASK, "actual": "someone-else"}]
    assert SECRET not in every_output(canal, "t")
    kept = canal.values("t")["failure"]
    assert is_sealed(kept["errors"][0]["expected"]) and SECRET not in json.dumps(kept)

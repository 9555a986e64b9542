"""The encryption key: a key file that is not a file, and a lost key, are configuration
errors that say how to recover; a new key is never made over runs an old one sealed."""

from __future__ import annotations

import json

import pytest

from canal import Canal, ConfigError, PythonTools
from tests.conftest import project_steps, write_workflow


def test_a_key_file_that_is_not_a_file_is_a_config_error(cli, project):
    (project / ".canal" / "key").mkdir(parents=True)
    result = cli("start", "create-project")
    assert result.code == 8 and result.json["error"]["code"] == "config"
    assert result.json["error"]["message"] == (
        f"{project / '.canal' / 'key'} is not a file: the key file must be a file holding "
        "the key (or set CANAL_ENCRYPTION_KEY)")
    assert json.loads(cli("runs").stdout)["runs"] == []


def test_a_lost_key_is_not_replaced_while_encrypted_runs_exist(cli, project):
    key = project / ".canal" / "key"
    thread = cli("start", "create-project").json["thread_id"]
    saved = key.read_bytes()
    key.unlink()
    for args in (["start", "create-project"], ["advance", thread], ["runs"]):
        result = cli(*args)
        assert result.code == 8 and result.json["error"]["code"] == "config", args
        message = result.json["error"]["message"]
        assert message.startswith(f"there is no encryption key ({key} is missing and "
                                  "CANAL_ENCRYPTION_KEY is not set), but ")
        assert f"restore {key} or set CANAL_ENCRYPTION_KEY" in message
        assert f"move {project / '.canal' / 'state.db'} away" in message
        assert not key.exists()
    key.write_bytes(saved)
    assert cli("current", thread).json["status"] == "awaiting_input"
    assert len(cli("runs").json["runs"]) == 1


def test_the_key_from_the_environment_reads_runs_without_a_key_file(cli, project):
    key = project / ".canal" / "key"
    thread = cli("start", "create-project").json["thread_id"]
    cli.env["CANAL_ENCRYPTION_KEY"] = key.read_text().strip()
    key.unlink()
    assert cli("advance", thread, "--gate-data", json.dumps(
        {"project_name": "p", "host": "p.example.com"})).json["status"] == "awaiting_input"
    assert not key.exists()


def test_a_lost_key_over_postgresql_is_refused_too(workflows, tmp_path, postgres_schema_url):
    write_workflow(workflows, "create-project", project_steps())
    options = {"workflows": workflows, "home": tmp_path / "h", "tools": PythonTools({}),
               "checkpointer": postgres_schema_url()}
    with Canal(**options) as canal:
        canal.start("create-project", thread_id="t")
    (tmp_path / "h" / "key").unlink()
    with pytest.raises(ConfigError, match="move the canal and checkpoint tables of the "
                                          "database away"), Canal(**options) as canal:
        canal.start("create-project", thread_id="u")
    assert not (tmp_path / "h" / "key").exists()

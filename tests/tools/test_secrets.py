"""Values of ``env`` and ``headers`` in ``.mcp.json`` never reach stdout or stderr, not even
through a warning of the MCP libraries about a ``${VAR}`` left unexpanded."""

from __future__ import annotations

import json
import sys

from tests.conftest import TOOLBOX, ProcessCli


def test_an_unset_variable_is_named_in_a_warning_and_no_value_is_printed(tmp_path, toolbox):
    toolbox.add("alpha", [{"name": "echo"}])
    toolbox.add_raw("env", {"command": sys.executable,
                            "args": [str(TOOLBOX), str(tmp_path / "servers/alpha/spec.json"),
                                     "env"],
                            "env": {"TOKEN": "s3cr3t-env-${CANAL_TEST_UNSET}"}})
    toolbox.add_raw("web", {"url": "http://127.0.0.1:9/mcp",
                            "headers": {"Authorization": "Bearer s3cr3t-hdr-${CANAL_TEST_UNSET}"}})
    cli = ProcessCli(tmp_path)  # a new process: what it prints is the point
    cli.env.pop("CANAL_TEST_UNSET", None)
    result = cli("discover")
    assert result.code == 9 and result.json["servers"]["alpha"]["status"] == "ok"
    assert result.json["servers"]["env"]["status"] == "ok"
    assert result.json["servers"]["web"]["status"] == "error"  # nothing listens there
    assert "MCP server 'env': env TOKEN uses ${CANAL_TEST_UNSET}, which is not set (sent as " \
           "written)" in result.stderr
    assert "MCP server 'web': headers Authorization uses ${CANAL_TEST_UNSET}, which is not " \
           "set" in result.stderr
    assert "s3cr3t" not in result.stdout + result.stderr


def test_a_value_that_itself_holds_a_reference_is_passed_on_and_never_printed(tmp_path,
                                                                             toolbox):
    toolbox.add("alpha", [{"name": "echo"}])
    toolbox.servers["alpha"]["env"] = {"TOKEN": "${CANAL_TEST_TOKEN}"}
    toolbox.write_config()
    cli = ProcessCli(tmp_path)
    cli.env["CANAL_TEST_TOKEN"] = "s3cr3t-${CANAL_TEST_UNSET}"
    cli.env.pop("CANAL_TEST_UNSET", None)
    result = cli("discover")
    assert result.code == 0, result.stdout + result.stderr
    assert "s3cr3t" not in result.stdout + result.stderr
    assert json.loads(result.stdout)["added"] == ["echo"]

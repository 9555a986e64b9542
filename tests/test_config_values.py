"""Every configuration value is checked for type and range where it is read: a wrong one is
a ConfigError (exit 8) naming the file and the key, never an internal error (exit 1)."""

from __future__ import annotations

import pytest

from tests.conftest import Cli

BIG = "9" * 5000
MCP = '{"mcpServers": {"a": {"command": "x", %s}}}'


@pytest.mark.parametrize("text, message", [
    ("limits: [1, 2]\n", "limits must be a mapping of limit names to numbers"),
    ("limits: {depth: 1.5}\n", "limits.depth must be a whole number from 1 to 2147483647"),
    ("limits: {data_bytes: 99999999999999}\n", "limits.data_bytes must be a whole number"),
    ("home: null\n", "home must be a path (a non-empty string)"),
    ("home: ''\n", "home must be a path (a non-empty string)"),
    ("workflows: [a]\n", "workflows must be a path (a non-empty string)"),
    ("mcp_config: 3\n", "mcp_config must be a path (a non-empty string)"),
    ("checkpointer: 5\n", "checkpointer must be a URL (a non-empty string)"),
    ("python_tools: [a]\n", "python_tools maps tool names to 'module:function'"),
    ("1: a\nb: c\n", "unknown setting(s) 1, b"),
    ("limits: {1: 2, a: 3}\n", "limits: unknown key(s) 1, a"),
    (f"limits: {{depth: {BIG}}}\n", "holds a number of more than 4300 digits"),
    ("[" * 5000 + "]" * 5000 + "\n", "is nested too deeply"),
])
def test_a_bad_canal_yaml_value_is_a_config_error(tmp_path, text, message):
    assert_config_error(tmp_path, "canal.yaml", text, "runs", message)


def assert_config_error(folder, name, text, command, message):
    (folder / name).write_text(text)
    result = Cli(folder)(command)
    assert result.code == 8 and result.json["error"]["code"] == "config"
    assert result.json["error"]["message"].startswith(f"{folder / name}: ")
    assert message in result.json["error"]["message"]


@pytest.mark.parametrize("text, message", [
    (MCP % '"timeout": 1e400', "mcpServers.a: timeout is a number of seconds from 0 "
                               "(exclusive) to 86400"),
    (MCP % '"timeout": 1e6', "timeout is a number of seconds from 0"),
    (MCP % '"timeout": "10"', "timeout is a number of seconds from 0"),
    (MCP % '"type": ["stdio"]', "mcpServers.a: type must be a string"),
    ('{"mcpServers": {"a": {"url": "http://x", "transport": {}}}}',
     "mcpServers.a: type must be a string"),
    (MCP % '"disabled": "yes"', "mcpServers.a: disabled must be true or false"),
    (MCP % '"cwd": ""', "mcpServers.a: cwd must be a non-empty string"),
    (MCP % f'"timeout": {BIG}', "holds a number of more than 4300 digits"),
    ("[" * 5000 + "]" * 5000, "is nested too deeply"),
])
def test_a_bad_mcp_json_value_is_a_config_error(tmp_path, text, message):
    assert_config_error(tmp_path, ".mcp.json", text, "discover", message)


@pytest.mark.parametrize("age", ["99999999999w", "9" * 5000 + "s"])
def test_an_age_too_large_is_a_usage_error(cli, age):
    result = cli("prune", "--older-than", age)
    assert result.code == 2 and result.json["error"]["code"] == "usage"
    assert "is more than" in result.json["error"]["message"]

"""canal call and canal meta against a real MCP server: checked arguments, clear errors."""

from __future__ import annotations

import pytest

from canal import Canal, ToolError
from canal.errors import ToolNotFound
from tests.conftest import schema

CREATE = {"name": "create", "description": "Create a thing.", "inputSchema": schema(
    "name", "mode", name={"type": "string", "description": "Name"},
    mode={"type": "integer", "description": "Mode: 0-off,1-on,2-auto"},
    tags={"type": "array", "default": []},
    id={"type": "integer", "description": "Record id"})}
TOOLS = [
    CREATE,
    {"name": "boom", "behavior": "error", "result": "host 'x' is not a domain"},
    {"name": "die", "behavior": "crash"},
    {"name": "slow", "behavior": "hang"},
    {"name": "texty", "behavior": "text", "result": {"n": 1}},
    {"name": "plain", "behavior": "plain", "result": "just words"},
]


@pytest.fixture
def canal(tmp_path, toolbox):
    toolbox.add("alpha", TOOLS, timeout=1.5)
    canal = Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                  mcp_config=tmp_path / ".mcp.json", checkpointer="memory:")
    canal.discover()
    return canal


def test_meta_applies_rules(canal):
    meta = canal.meta("create")
    assert meta["ignored"] == ["id"]
    assert [f["name"] for f in meta["fields"]] == ["name", "mode", "tags"]
    mode = meta["fields"][1]
    assert mode == {"name": "mode", "type": "integer", "required": True,
                    "description": "Mode: 0-off,1-on,2-auto", "enum": [0, 1, 2],
                    "enum_labels": {"0": "off", "1": "on", "2": "auto"}}
    assert meta["fields"][2]["default"] == []
    assert [f["name"] for f in canal.meta("create", required_only=True)["fields"]] == [
        "name", "mode"]


def test_arguments_are_checked_before_anything_is_sent(canal, toolbox):
    out = canal.call("create", {"mode": 7, "id": 3, "color": "red", "tags": "x"})
    assert out["status"] == "rejected"
    assert out["missing"] == ["name"]
    assert out["errors"] == [{"field": "mode", "message": "must be one of: 0, 1, 2"},
                             {"field": "tags", "message": "expected array, got string"}]
    assert out["dropped"] == ["id", "color"]
    assert toolbox.calls("alpha") == []
    assert canal.call("create", [1])["errors"] == [
        {"field": "", "message": "expected a JSON object, got array"}]


@pytest.mark.parametrize("name", ["", "  \t"])
def test_a_required_string_that_is_empty_or_blank_is_missing(canal, toolbox, name):
    out = canal.call("create", {"name": name, "mode": 1})
    assert out["status"] == "rejected" and out["missing"] == ["name"]
    assert toolbox.calls("alpha") == []


def test_a_valid_call_sends_only_what_is_declared(canal, toolbox):
    out = canal.call("create", {"name": "n", "mode": 1, "id": 9})
    assert out["status"] == "ok" and out["dropped"] == ["id"]
    assert out["result"] == {"tool": "create", "server": "alpha",
                             "arguments": {"name": "n", "mode": 1}}
    assert toolbox.calls("alpha") == [{"server": "alpha", "tool": "create",
                                       "arguments": {"name": "n", "mode": 1}}]


def test_results_text_json_and_plain(canal):
    assert canal.call("texty", {})["result"] == {"n": 1}
    assert canal.call("plain", {})["result"] == "just words"


@pytest.mark.parametrize("tool, message", [
    ("boom", "boom: host 'x' is not a domain"),
    ("die", "die: MCP server 'alpha' failed: the server closed the connection (it may have "
            "crashed); see {log}"),
    ("slow", "slow: MCP server 'alpha' failed: no answer within 1.5s (the server's timeout); "
             "see {log}"),
])
def test_tool_failures_are_clear_errors(canal, tmp_path, tool, message):
    with pytest.raises(ToolError) as caught:
        canal.call(tool, {})
    assert caught.value.message == message.format(log=tmp_path / ".canal" / "logs" / "alpha.log")


def test_unknown_tool(canal):
    with pytest.raises(ToolNotFound, match="no tool 'nope' in the tool cache"):
        canal.call("nope", {})
    with pytest.raises(ToolNotFound, match=r"no tool '\.\./x'"):
        canal.meta("../x")


def test_an_enum_on_an_array_field_checks_each_item(tmp_path, toolbox):
    toolbox.add("alpha", [{"name": "tag", "inputSchema": schema(
        "tags", tags={"type": "array", "items": {"type": "integer", "enum": [1, 2]}})}])
    canal = Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                  mcp_config=tmp_path / ".mcp.json", checkpointer="memory:")
    canal.discover()
    assert canal.meta("tag")["fields"][0]["enum"] == [1, 2]
    assert canal.call("tag", {"tags": [1, 3]})["errors"] == [
        {"field": "tags", "message": "must be one of: 1, 2"}]
    assert canal.call("tag", {"tags": [2, 1]})["status"] == "ok"

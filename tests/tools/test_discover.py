"""discover against real MCP servers (tests/servers/toolbox.py) whose tools change between runs."""

from __future__ import annotations

import json

import pytest

from canal import Canal, ConfigError
from tests.conftest import schema


def canal_for(tmp_path) -> Canal:
    return Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                 mcp_config=tmp_path / ".mcp.json", checkpointer="memory:")


def tool(name, description="", behavior="echo", **extra):
    return {"name": name, "description": description, "behavior": behavior,
            "inputSchema": extra.pop("inputSchema", schema()), **extra}


def test_added_removed_and_changed_are_reported_exactly(tmp_path, toolbox):
    toolbox.add("alpha", [
        tool("add", "Add two numbers.\nLong explanation.", inputSchema=schema("a", a="integer")),
        tool("keep", "Stays the same."),
        tool("drop", "Goes away."),
        tool("hinted", "Annotations change.", annotations={"readOnlyHint": True}),
    ], page_size=2)
    canal = canal_for(tmp_path)
    first = canal.discover()
    assert first["status"] == "ok"
    assert first["added"] == ["add", "drop", "hinted", "keep"]
    assert (first["total"], first["added_count"], first["removed_count"]) == (4, 4, 0)
    assert first["servers"] == {"alpha": {"status": "ok", "tools": 4}}
    folder = tmp_path / ".canal" / "tools"
    assert json.loads((folder / "add.meta").read_text())["description"].startswith("Add two")

    toolbox.set_tools("alpha", [
        tool("add", "Add two numbers.", inputSchema=schema("a", "b", a="integer", b="integer")),
        tool("keep", "Stays the same."),
        tool("hinted", "Annotations change.", annotations={"readOnlyHint": False}),
        tool("new", "Brand new."),
    ], page_size=3)
    second = canal.discover()
    assert second["added"] == ["new"] and second["removed"] == ["drop"]
    assert second["changed"] == ["add", "hinted"]
    assert (second["added_count"], second["removed_count"], second["changed_count"]) == (1, 1, 2)
    assert not (folder / "drop.meta").exists() and (folder / "new.meta").exists()
    assert canal.index()["tools"] == ["add: Add two numbers.", "hinted: Annotations change.",
                                      "keep: Stays the same.", "new: Brand new."]
    assert [t["name"] for t in canal.index(full=True)["tools"]] == [
        "add", "hinted", "keep", "new"]
    assert "- new: Brand new." in (folder / "tools-index.md").read_text()
    assert canal.meta("add", required_only=True)["fields"] == [
        {"name": "a", "type": "integer", "required": True, "description": ""},
        {"name": "b", "type": "integer", "required": True, "description": ""}]

    written = {p.name: p.stat().st_ino for p in folder.iterdir()}
    (folder / "keep.rules").chmod(0o644)
    third = canal.discover()
    assert (third["added"], third["removed"], third["changed"]) == ([], [], [])
    # Nothing changed, so no file was written anew, but for the one made readable to others.
    again = {p.name: p.stat().st_ino for p in folder.iterdir()}
    assert {name for name in again if again[name] != written[name]} == {"keep.rules"}
    assert (folder / "keep.rules").stat().st_mode & 0o777 == 0o600


def test_pagination_is_followed(tmp_path, toolbox):
    toolbox.add("alpha", [tool(f"t{i}") for i in range(7)], page_size=2)
    assert canal_for(tmp_path).discover()["total"] == 7


def test_manual_rules_survive_and_win(tmp_path, toolbox):
    create = tool("create", "Create a thing.", inputSchema=schema(
        "name", name="string", id="integer", update_time="string",
        mode={"type": "integer", "description": "Mode: 0-off,1-on"}))
    toolbox.add("alpha", [create])
    canal = canal_for(tmp_path)
    canal.discover()
    rules = tmp_path / ".canal" / "tools" / "create.rules"
    auto = rules.read_text()
    assert "IGNORE:id  #auto" in auto and "IGNORE:update_time  #auto" in auto
    assert "ENUM:mode:0-off,1-on  #auto" in auto
    assert canal.meta("create")["ignored"] == ["id", "update_time"]

    rules.write_text(auto + "NOTE:names are unique\nKEEP:update_time\nENUM:mode:1-on\n")
    canal.discover()
    text = rules.read_text()
    assert "NOTE:names are unique\nKEEP:update_time\nENUM:mode:1-on\n" in text
    assert "IGNORE:id  #auto" in text
    meta = canal.meta("create")
    assert meta["notes"] == ["names are unique"]
    assert meta["ignored"] == ["id"]
    mode = next(f for f in meta["fields"] if f["name"] == "mode")
    assert mode["enum"] == [1] and mode["enum_labels"] == {"1": "on"}

    toolbox.set_tools("alpha", [])
    assert canal.discover()["removed"] == ["create"]
    assert rules.exists(), "hand-written rules are kept when their tool goes away"


def test_a_name_two_servers_share_is_qualified(tmp_path, toolbox):
    toolbox.add("alpha", [tool("echo", "Alpha echo."), tool("only_alpha")])
    toolbox.add("beta", [tool("echo", "Beta echo.")])
    canal = canal_for(tmp_path)
    summary = canal.discover()
    assert summary["added"] == ["alpha.echo", "beta.echo", "only_alpha"]
    assert canal.meta("beta.echo")["description"] == "Beta echo."
    assert canal.meta("alpha.only_alpha")["name"] == "only_alpha"  # qualified form always works
    with pytest.raises(Exception, match="no tool 'echo'"):
        canal.meta("echo")


def test_a_broken_server_does_not_stop_the_others(tmp_path, toolbox):
    toolbox.add("alpha", [tool("a1")])
    toolbox.add("beta", [tool("b1")])
    canal = canal_for(tmp_path)
    canal.discover()
    toolbox.add_raw("beta", {"command": str(tmp_path / "no-such-server"),
                             "env": {"TOKEN": "s3cr3t-value"}})
    toolbox.set_tools("alpha", [tool("a1"), tool("a2")])
    summary = canal.discover()
    assert summary["status"] == "partial"
    assert summary["added"] == ["a2"] and summary["removed"] == []
    assert summary["servers"]["alpha"] == {"status": "ok", "tools": 2}
    error = summary["servers"]["beta"]["error"]
    assert error.startswith(f"cannot start MCP server 'beta' ({tmp_path}/no-such-server)")
    assert "No such file or directory" in error
    assert "s3cr3t" not in json.dumps(summary)
    assert canal.meta("b1")["server"] == "beta", "a broken server's tools stay cached"


def test_unsafe_tool_names_are_skipped_and_reported(tmp_path, toolbox):
    toolbox.add("alpha", [tool("../evil"), tool("fine")])
    summary = canal_for(tmp_path).discover()
    assert summary["added"] == ["fine"]
    assert summary["servers"]["alpha"]["skipped"] == [
        "'../evil': not a safe tool name (letters, digits, '_', '.', '-')"]
    assert not (tmp_path / ".canal" / "evil.meta").exists()


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ("[]", "expected an object with an 'mcpServers' object"),
    ('{"mcpServers": {"a b": {"command": "x"}}}', "mcpServers.a b: a server name is"),
    ('{"mcpServers": {"a": {"args": []}}}', "mcpServers.a: needs 'command'"),
    ('{"mcpServers": {"a": {"command": "x", "args": "y"}}}', "args must be a list of strings"),
    ('{"mcpServers": {"a": {"url": "ftp://x"}}}', "url must be an http:// or https:// URL"),
    ('{"mcpServers": {"a": {"url": "http://x", "type": "carrier-pigeon"}}}', "unknown type"),
    ('{"mcpServers": {"a": {"command": "x", "timeout": 0}}}', "timeout is a number"),
    ('{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}', "env must map names to strings"),
])
def test_a_bad_config_file_names_the_file_and_the_problem(tmp_path, text, message):
    (tmp_path / ".mcp.json").write_text(text)
    with pytest.raises(ConfigError) as caught:
        canal_for(tmp_path).discover()
    assert caught.value.message.startswith(str(tmp_path / ".mcp.json"))
    assert message in caught.value.message


def test_no_config_file_means_no_servers(tmp_path):
    summary = canal_for(tmp_path).discover()
    assert summary["status"] == "ok" and summary["total"] == 0 and summary["servers"] == {}

"""The tool service of the ``Canal`` facade: discover, index, search, meta and call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from canal.config import Settings
from canal.errors import CanalError, NeedsConfirmation, NotFound, UsageError
from canal.tools.cache import ToolCache

if TYPE_CHECKING:
    from canal.tools.search import Entry

# (name, description, definition digest) -> what search finds the workflow by, per process:
# loading a workflow parses its YAML, the slow part of a search.
_WORKFLOW_TEXTS: dict[tuple[str, str, str], tuple[str, ...]] = {}


class ToolCommands:
    """Tool commands over one project's settings and tool cache."""

    def __init__(self, settings: Settings, tool_cache: ToolCache,
                 routes_tools: bool = True) -> None:
        self.settings = settings
        self.tool_cache = tool_cache
        # False: runs call a ToolClient passed in, which may know tools the cache does not
        self.routes_tools = routes_tools
        self._held: Any = None  # the MCP connections call keeps (keep_sessions), or None
        self._keep = False

    def keep_sessions(self) -> None:
        """Keep ``call``'s MCP sessions open from one call to the next, until ``release``
        (``Canal.keep_tool_sessions``: a long-lived process starts each server once)."""
        self._keep = True

    def release(self) -> None:
        """End the sessions ``call`` kept."""
        held, self._held = self._held, None
        if held is not None:
            held.close()

    def discover(self) -> dict[str, Any]:
        """Sync every configured MCP server's tools into the cache; the change summary, with
        ``affected``: the workflow steps that call a tool that changed or disappeared."""
        from canal.runtime.drift import affected_steps
        from canal.spec.loader import describe_workflows
        from canal.tools.discover import discover
        from canal.tools.servers import load_servers

        servers = load_servers(self.settings.mcp_config)
        before = self.tool_cache.all()
        summary = discover(servers, self.tool_cache,
                           describe_workflows(self.settings.workflows), self.settings.logs)
        summary["affected"] = affected_steps(self.settings.workflows, before,
                                             summary["removed"], summary["changed"])
        return summary

    def index(self, full: bool = False) -> dict[str, Any]:
        """Workflows first, then tools, one short line each (``full``: objects instead, with
        each tool's server and hints). Above ``SUMMARY_ABOVE`` tools, and not ``full``, one
        line per MCP server (``servers``) and ``tool_count`` stand in for the tools, and
        ``next`` points to ``search``."""
        from canal.spec.loader import describe_workflows
        from canal.tools.search import SUMMARY_ABOVE, server_lines

        workflows = describe_workflows(self.settings.workflows)
        tools = self.tool_cache.all()
        if full:
            return {"status": "ok",
                    "workflows": [{"name": n, "description": d} for n, d in workflows],
                    "tools": [{"name": m.name, "description": m.summary(), "server": m.server,
                               "hints": m.hints()} for m in tools]}
        lines = [workflow_line(n, d) for n, d in workflows]
        if len(tools) <= SUMMARY_ABOVE:
            return {"status": "ok", "workflows": lines, "tools": [m.line() for m in tools]}
        return {"status": "ok", "workflows": lines, "tool_count": len(tools),
                "servers": server_lines(tools),
                "next": {"command": "search", "hint": f"{len(tools)} tools are too many to "
                         "list: canal search QUERY ranks the workflows and tools for a task "
                         "(a few words: what it does, what it acts on); canal index --full "
                         "lists every one"}}

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        """The workflows and the tools that best match ``query``, best first, at most
        ``limit`` of each, in the lines ``index`` shows (``canal.tools.search``). Reads the
        tool cache and the workflows only: no server, no model. A blank query or a limit
        below 1 is a ``UsageError``."""
        from canal.tools.search import ranking

        if not isinstance(query, str) or not query.strip():
            raise UsageError("search needs a query: a few words about the task, e.g. canal "
                             "search 'create a project'")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise UsageError(f"search: the limit is a whole number, at least 1: {limit!r}")
        flows = self._workflow_entries()
        key = (str(self.tool_cache.folder), self.tool_cache.fingerprint(), tuple(flows))
        found = ranking(key, lambda: flows + self._tool_entries()).top(query)
        workflows = [e for e in found if e.kind == "workflow"][:limit]
        tools = [e for e in found if e.kind == "tool"][:limit]
        return {"status": "ok", "query": query, "workflows": [e.line for e in workflows],
                "tools": [e.line for e in tools], "next": _search_next(workflows, tools)}

    def _workflow_entries(self) -> list[Entry]:
        """Every workflow, with the texts search finds it by."""
        from canal.spec.loader import describe_workflows
        from canal.tools.search import Entry

        return [Entry("workflow", name, workflow_line(name, description),
                      self._workflow_texts(name, description))
                for name, description in describe_workflows(self.settings.workflows)]

    def _tool_entries(self) -> list[Entry]:
        """Every cached tool, with the texts search finds it by (its rules applied)."""
        from canal.tools.meta import rules_of
        from canal.tools.search import Entry, tool_texts

        entries = []
        for meta in self.tool_cache.all():
            rules = rules_of(self.tool_cache.rules_text(meta.name))
            entries.append(Entry("tool", meta.name, meta.line(), tool_texts(meta, rules)))
        return entries

    def _workflow_texts(self, name: str, description: str) -> tuple[str, ...]:
        """Workflow ``name``'s name, description and gate fields (only the first two when it
        does not load: ``canal validate`` says why). Kept per definition digest."""
        from canal.spec.loader import digest_of, workflow_dir, workflow_files
        from canal.spec.validate import load_files
        from canal.tools.search import workflow_texts

        folder = workflow_dir(self.settings.workflows, name)
        files = workflow_files(folder)
        key = (name, description, digest_of(files))
        if key not in _WORKFLOW_TEXTS:
            if len(_WORKFLOW_TEXTS) > 1000:
                _WORKFLOW_TEXTS.clear()
            try:
                spec = load_files(name, files, str(folder))
            except CanalError:
                _WORKFLOW_TEXTS[key] = (name, description)
            else:
                _WORKFLOW_TEXTS[key] = workflow_texts(spec, description)
        return _WORKFLOW_TEXTS[key]

    def hints(self, tool: str) -> dict[str, Any]:
        """The MCP annotations of ``tool`` from the tool cache: ``{}`` for a Python tool or
        one the cache does not know. Reads files only; never starts a server."""
        if tool in self.settings.python_tools:
            return {}
        try:
            return dict(self.tool_cache.get(tool).annotations)
        except NotFound:
            return {}

    def input_schema(self, tool: str) -> dict[str, Any] | None:
        """The input schema workflow calls of ``tool`` are checked against (its rules'
        ENUMs merged in), from the tool cache: None for a Python tool or one the cache does
        not know. Reads files only; never starts a server."""
        from canal.tools.meta import checked_schema, rules_of

        if tool in self.settings.python_tools:
            return None
        try:
            meta = self.tool_cache.get(tool)
        except NotFound:
            return None
        return checked_schema(meta, rules_of(self.tool_cache.rules_text(meta.name)))

    def known_tools(self) -> list[str] | None:
        """Every name a workflow may call a tool by (canal names, ``server.tool`` forms, the
        Python tools and canal's built-in authoring tools), or None when there is no tool
        cache yet (nothing was ever discovered, so an MCP tool's name cannot be judged) or
        when runs call a client passed in (it may know tools of its own)."""
        if not self.routes_tools or not (self.tool_cache.folder / "index.json").is_file():
            return None
        from canal.authoring.builtins import BUILTIN_TOOLS

        names = set(self.settings.python_tools) | set(BUILTIN_TOOLS)
        for meta in self.tool_cache.all():
            names |= {meta.name, f"{meta.server}.{meta.tool}"}
        return sorted(names)

    def output_schema(self, tool: str) -> dict[str, Any] | None:
        """The output schema ``tool`` declares (MCP ``outputSchema``), from the tool cache:
        None for a Python tool, an unknown tool, or one that declares none."""
        if tool in self.settings.python_tools:
            return None
        try:
            return self.tool_cache.get(tool).output_schema
        except NotFound:
            return None

    def meta(self, tool: str, required_only: bool = False) -> dict[str, Any]:
        """One tool's fields after its rules, with notes and annotations."""
        from canal.tools.meta import describe, rules_of

        meta = self.tool_cache.get(tool)
        return describe(meta, rules_of(self.tool_cache.rules_text(meta.name)), required_only)

    def call(self, tool: str, arguments: Any, confirm: bool = False) -> dict[str, Any]:
        """One tool call, checked against the tool's metadata before anything is sent.

        A tool whose annotations say ``destructiveHint: true`` is called only with
        ``confirm=True`` (``--confirm``); a tool without annotations is not destructive.
        """
        from canal.limits import check as check_limits
        from canal.limits import json_plain_data
        from canal.tools.mcp import McpConnections
        from canal.tools.meta import check_arguments, rules_of
        from canal.tools.servers import load_servers

        meta = self.tool_cache.get(tool)
        if meta.annotations.get("destructiveHint") is True and not confirm:
            raise NeedsConfirmation(
                f"{meta.name} is destructive (its server says destructiveHint); nothing was "
                "sent: call it again with --confirm to go ahead", tool=meta.name)
        arguments = json_plain_data(arguments)
        check_limits(arguments, "the arguments", self.settings.limits)
        check = check_arguments(meta, rules_of(self.tool_cache.rules_text(meta.name)),
                                arguments)
        out: dict[str, Any] = {"tool": meta.name, "server": meta.server,
                               "missing": check.missing, "errors": check.errors,
                               "dropped": check.dropped}
        if not check.accepted:
            return {"status": "rejected", **out}
        connections = self._held or McpConnections(load_servers(self.settings.mcp_config),
                                                   self.settings.logs)
        if self._keep:
            self._held = connections
        try:
            result = connections.call(meta.server, meta.tool, check.data)
        finally:
            if not self._keep:
                connections.close()
        return {"status": "ok", **out, "arguments": check.data, "result": result}


def workflow_line(name: str, description: str) -> str:
    """A workflow's line in the index and in search results."""
    return f"{name}: {description}"


def _search_next(workflows: list[Entry], tools: list[Entry]) -> dict[str, Any]:
    if workflows:
        return {"command": "start", "workflow": workflows[0].name,
                "hint": "prefer a workflow that covers the task: canal start WORKFLOW (canal "
                        "show WORKFLOW says what it would do); for one tool, canal meta TOOL "
                        "shows its fields"}
    if tools:
        return {"command": "meta", "tool": tools[0].name,
                "hint": "no workflow matched: canal meta TOOL shows a tool's fields before "
                        "you call it"}
    return {"command": "search", "hint": "nothing matched: search again with other words "
                                         "(what the task does, what it acts on), or read "
                                         "canal index --full"}

"""The in-process ToolClient: keyword calls, JSON-plain results, errors as ToolError."""

import pytest

from canal import PythonTools, ToolClient, ToolError


def test_calls_with_keywords_and_normalises_to_json():
    tools = PythonTools({"pair": lambda a, b=2: {"sum": a + b, "items": (a, b)}})
    assert isinstance(tools, ToolClient)
    assert tools.call("pair", {"a": 1}) == {"sum": 3, "items": [1, 2]}


def test_import_paths_are_resolved_on_first_call():
    tools = PythonTools({"dumps": "json:dumps", "ghost": "no_such_module_x:f",
                         "missing": "json:no_such_function"})
    assert tools.call("dumps", {"obj": [1]}) == "[1]"
    with pytest.raises(ToolError, match="ghost: cannot import 'no_such_module_x:f'"):
        tools.call("ghost", {})
    with pytest.raises(ToolError, match="missing: cannot import 'json:no_such_function'"):
        tools.call("missing", {})


@pytest.mark.parametrize("function, arguments, message", [
    (lambda: 1 / 0, {}, "t: ZeroDivisionError: division by zero"),
    (lambda: object(), {}, "t: the result is not JSON data"),
    (lambda: float("nan"), {}, "t: the result is not JSON data"),
    (lambda a: a, {"b": 1}, "t: TypeError:"),
])
def test_failures_become_tool_errors(function, arguments, message):
    with pytest.raises(ToolError) as caught:
        PythonTools({"t": function}).call("t", arguments)
    assert caught.value.message.startswith(message)
    assert caught.value.details["tool"] == "t"


def test_unknown_tool_lists_the_known_ones():
    with pytest.raises(ToolError, match=r"unknown tool 'x' \(known: a, b\)"):
        PythonTools({"b": print, "a": print}).call("x", {})

"""``canal --help`` tells a reader every exit code and status, and each command's help ends
with an example that parses as that command."""

from __future__ import annotations

import shlex

import pytest

from canal.cli import helptext, main
from canal.cli.commands import COMMANDS
from tests.conftest import ROOT


def help_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        main.run([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def flat(text: str) -> str:
    return " ".join(text.split())


def test_help_lists_every_exit_code_with_its_meaning(capsys):
    text = help_of(capsys)
    exits = flat(text[text.index("exit codes:"):text.index("statuses")])
    for code, meaning in helptext.EXIT_CODES:
        assert f" {code} {meaning}" in f" {exits}", code
    assert [code for code, _ in helptext.EXIT_CODES] == [*range(10), 130, 143]


def test_help_lists_every_status_with_its_meaning(capsys):
    statuses = flat(help_of(capsys).split("statuses")[1])
    for status, meaning in helptext.STATUSES:
        assert f" {status} {meaning}" in f" {statuses}", status
    listed = {status for status, _ in helptext.STATUSES}
    assert {"awaiting_input", "failed", "completed", "aborted", "rejected", "stale",
            "ok", "error"} <= listed
    assert set(main.EXIT_BY_STATUS) <= listed  # every status that sets an exit code


def test_the_module_docstring_quotes_the_same_table():
    assert main.__doc__ is not None
    assert f"Exit codes:\n{helptext.exit_code_table()}\n" in main.__doc__


def test_the_readme_has_a_row_for_every_exit_code():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for code, _ in helptext.EXIT_CODES:
        assert f"\n| {code} | " in readme, code


@pytest.mark.parametrize("name", [command[0] for command in COMMANDS])
def test_every_command_ends_its_help_with_an_example_of_itself(capsys, name):
    text = help_of(capsys, name)
    last = text.rstrip().splitlines()[-1]
    assert last.startswith(f"example: canal {name} "), last
    argv = shlex.split(last.removeprefix("example: "))
    assert argv[0] == "canal"
    args = main.build_parser().parse_args(argv[1:])  # the example is valid syntax
    assert args.command == name

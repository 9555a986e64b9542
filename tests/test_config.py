"""Settings: flags > environment > canal.yaml > defaults, and clear errors for bad files."""

from pathlib import Path

import pytest

from canal.config import load_settings
from canal.errors import ConfigError


def test_defaults(tmp_path):
    s = load_settings(cwd=tmp_path, environ={})
    assert s.workflows == tmp_path / "workflows"
    assert s.home == tmp_path / ".canal"
    assert s.checkpointer == f"sqlite:///{tmp_path / '.canal' / 'state.db'}"
    assert s.mcp_config == tmp_path / ".mcp.json"
    assert s.python_tools == {}


def test_precedence(tmp_path):
    (tmp_path / "canal.yaml").write_text("workflows: from-file\nhome: file-home\n"
                                         "checkpointer: \"memory:\"\n")
    env = {"CANAL_WORKFLOWS": "from-env", "CANAL_CHECKPOINTER": ""}
    s = load_settings(cwd=tmp_path, environ=env)
    assert s.workflows == tmp_path / "from-env"
    assert s.home == tmp_path / "file-home"
    assert s.checkpointer == "memory:"  # an empty variable counts as unset
    s = load_settings(workflows="/abs/flag", cwd=tmp_path, environ=env)
    assert s.workflows == Path("/abs/flag")


def test_home_moves_the_default_database(tmp_path):
    s = load_settings(cwd=tmp_path, environ={"CANAL_HOME": "state"})
    assert s.checkpointer == f"sqlite:///{tmp_path / 'state' / 'state.db'}"


@pytest.mark.parametrize("text, message", [
    ("workflows: [unclosed", "cannot read"),
    ("- a\n- b\n", "expected a mapping of settings"),
    ("workflow: typo\n", "unknown setting(s) workflow (known: workflows, home"),
    ("python_tools: {t: no_colon}\n", "python_tools maps tool names to 'module:function'"),
])
def test_bad_canal_yaml(tmp_path, text, message):
    (tmp_path / "canal.yaml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings(cwd=tmp_path, environ={})
    assert str(tmp_path / "canal.yaml") in caught.value.message
    assert message in caught.value.message

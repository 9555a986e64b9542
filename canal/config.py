"""Settings, most specific first: arguments > environment variables > ``canal.yaml`` > defaults.

=================  ======================  ==================  ===============================
setting            environment variable    ``canal.yaml`` key  default
=================  ======================  ==================  ===============================
workflows folder   ``CANAL_WORKFLOWS``     ``workflows``       ``./workflows``
state folder       ``CANAL_HOME``          ``home``            ``./.canal``
checkpointer URL   ``CANAL_CHECKPOINTER``  ``checkpointer``    ``sqlite:///<home>/state.db``
MCP servers file   ``CANAL_MCP_CONFIG``    ``mcp_config``      ``./.mcp.json``
Python tools       (none)                  ``python_tools``    none
input limits       (none)                  ``limits``          see ``canal.limits.Limits``
=================  ======================  ==================  ===============================

``python_tools`` maps tool names to ``module:function`` import paths; those tools are called
in process (see ``canal.tools.PythonTools``). Relative paths are taken from the working
directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canal.errors import ConfigError
from canal.limits import Limits, too_many_digits

CONFIG_FILE = "canal.yaml"
_KEYS = ("workflows", "home", "checkpointer", "mcp_config", "python_tools", "limits")


@dataclass(frozen=True)
class Settings:
    workflows: Path
    home: Path
    checkpointer: Any
    mcp_config: Path
    python_tools: Mapping[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)

    @property
    def logs(self) -> Path:
        """Where stdio MCP servers write their stderr: ``<home>/logs/<server>.log``."""
        return self.home / "logs"


def _file_settings(cwd: Path) -> dict[str, Any]:
    """``canal.yaml``'s settings, every value checked for its type and range here."""
    path = cwd / CONFIG_FILE
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: is nested too deeply") from exc
    except ValueError as exc:  # YAML's int() of a number longer than Python converts
        raise ConfigError(f"{path}: {too_many_digits('it').message}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings")
    unknown = sorted(str(k) for k in data if k not in _KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {', '.join(unknown)} "
                          f"(known: {', '.join(_KEYS)})")
    for key in ("workflows", "home", "mcp_config", "checkpointer"):
        if key in data and (not isinstance(data[key], str) or not data[key]):
            kind = "a URL" if key == "checkpointer" else "a path"
            raise ConfigError(f"{path}: {key} must be {kind} (a non-empty string)")
    tools = data.get("python_tools", {})
    if not isinstance(tools, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and ":" in v for k, v in tools.items()
    ):
        raise ConfigError(f"{path}: python_tools maps tool names to 'module:function'")
    data["limits"] = Limits.from_settings(data.get("limits"), str(path))
    return data


def load_settings(
    workflows: str | Path | None = None,
    home: str | Path | None = None,
    checkpointer: Any = None,
    mcp_config: str | Path | None = None,
    cwd: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve every setting from the given values, the environment and ``canal.yaml``."""
    base = Path(cwd) if cwd is not None else Path.cwd()
    env = os.environ if environ is None else environ
    file = _file_settings(base)

    def pick(given: Any, env_name: str, key: str, default: Any) -> Any:
        if given is not None:
            return given
        if env.get(env_name):
            return env[env_name]
        return file.get(key, default)

    home_dir = base / Path(pick(home, "CANAL_HOME", "home", ".canal"))
    return Settings(
        workflows=base / Path(pick(workflows, "CANAL_WORKFLOWS", "workflows", "workflows")),
        home=home_dir,
        checkpointer=pick(checkpointer, "CANAL_CHECKPOINTER", "checkpointer",
                          f"sqlite:///{home_dir / 'state.db'}"),
        mcp_config=base / Path(pick(mcp_config, "CANAL_MCP_CONFIG", "mcp_config", ".mcp.json")),
        python_tools=dict(file.get("python_tools", {})),
        limits=file.get("limits", Limits()),
    )

"""canal: Markdown workflows compiled into resumable LangGraph graphs around an LLM agent.

The public API is what ``__all__`` lists; everything else is internal. Importing ``canal``
has no side effects and does not import LangGraph's graph engine.
"""

from canal.errors import (
    CanalError,
    ConfigError,
    InvalidName,
    LimitExceeded,
    MigrationRefused,
    NeedsConfirmation,
    NotFound,
    Problem,
    RewindRefused,
    RunConflict,
    RunNotFound,
    RunStateError,
    TemplateError,
    Terminated,
    ThreadTaken,
    ToolError,
    ToolNotFound,
    UsageError,
    WorkflowInvalid,
    WorkflowNotFound,
)
from canal.nodes.base import ABORT
from canal.runtime import Canal, Envelope, StepView
from canal.tools import PythonTools, ToolClient

__version__ = "0.1.0"

__all__ = [
    "ABORT",
    "Canal",
    "CanalError",
    "ConfigError",
    "Envelope",
    "InvalidName",
    "LimitExceeded",
    "MigrationRefused",
    "NeedsConfirmation",
    "NotFound",
    "Problem",
    "PythonTools",
    "RewindRefused",
    "RunConflict",
    "RunNotFound",
    "RunStateError",
    "StepView",
    "TemplateError",
    "Terminated",
    "ThreadTaken",
    "ToolClient",
    "ToolError",
    "ToolNotFound",
    "UsageError",
    "WorkflowInvalid",
    "WorkflowNotFound",
    "__version__",
]

"""The project's workflows as LangGraph Server graphs, one per workflow, the graph id being
the workflow's name. ``langgraph.json`` names them as ``<this module>:<workflow name>``:

    {"dependencies": ["."],
     "graphs": {"create-permission-set":
                "canal.integrations.langgraph_server:create-permission-set"}}

and ``canal langgraph-json`` writes those entries for every workflow of a project.

Importing this module is the server loading the project, so unlike the rest of canal it
does work on import: it reads the settings as the CLI does (``canal.yaml`` and ``CANAL_*``
in the working directory, which ``langgraph dev`` leaves at the folder it was started in)
and compiles every workflow without a checkpointer (the server brings its own). An invalid
workflow stops the import with canal's report of every problem. The graphs call tools
through one ``Canal`` object and keep its call journal in its store (``.canal/``), so run
``canal discover`` before serving a workflow with MCP tools.

Every other module-level name starts with ``_``, so any workflow name is free to be one.
"""

import sys as _sys

from canal.errors import WorkflowInvalid as _WorkflowInvalid
from canal.runtime.canal import Canal as _Canal


def _load() -> None:
    canal = _Canal()
    module = vars(_sys.modules[__name__])
    for name in canal.workflows():
        try:
            spec = canal.workflow(name)
        except _WorkflowInvalid as exc:  # the server prints the traceback: give it the list
            for problem in exc.problems:
                exc.add_note(f"  {problem}")
            raise
        module[name] = canal.compile(spec, checkpointer=None)


_load()

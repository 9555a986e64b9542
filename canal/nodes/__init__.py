"""Node factories, one per step type (``interactive``, ``automated``, ``notification``), and the
gate check the runtime runs before resuming a paused node.

This package's ``__init__`` imports nothing: ``canal.nodes.gate`` is used by read-only
commands, which must not pull in LangGraph's graph engine with the node modules.
"""

"""Tools canal calls: the ``ToolClient`` protocol and its implementations.

Importing this package is cheap; the MCP client is imported only by the module that uses it.
"""

from canal.tools.client import PythonTools, ToolClient

__all__ = ["PythonTools", "ToolClient"]

"""A real MCP server over HTTP: ``python web.py PORT streamable-http|sse``."""

import sys

from mcp.server.fastmcp import FastMCP


def main() -> None:
    port, transport = int(sys.argv[1]), sys.argv[2]
    server = FastMCP("web", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool(description="Greet someone by name.")
    def greet(name: str) -> dict:
        return {"hello": name}

    server.run(transport=transport)


if __name__ == "__main__":
    main()

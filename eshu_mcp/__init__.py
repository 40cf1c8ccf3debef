"""eshu-mcp: a Twisted Model Context Protocol server for Eshu's read-only tool catalog."""

__version__ = "0.1.0"

SERVER_NAME = "eshu-mcp-server"

"""The MCP protocol core: JSON-RPC framing and the method table, shared by every transport."""

# Discovery must stay cheap: ServiceMaker imports eshu_mcp.tap only when the plugin is used.
from twisted.application.service import ServiceMaker

eshuMCP = ServiceMaker(
    "Eshu MCP server",
    "eshu_mcp.tap",
    "Serve Eshu's read-only code-intelligence tools to MCP clients.",
    "eshu-mcp",
)

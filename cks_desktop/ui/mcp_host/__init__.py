"""The window's answers to what MCP servers ask of the person (elicitation, sampling)."""

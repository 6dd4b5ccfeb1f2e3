"""The settings dialog: providers, chat and agent, MCP servers."""

"""Small MCP servers written with the SDK's own server API, run as real subprocesses by the tests."""

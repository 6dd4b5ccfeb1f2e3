"""Tool specs, calls, results, scopes, approvals, the registry, and the built-in tools."""

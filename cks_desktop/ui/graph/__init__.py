"""The graph area. Until the graph view lands, a list of the session's objects."""

"""The sessions sidebar: list, filter, create, rename, delete with confirmation."""

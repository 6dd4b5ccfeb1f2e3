"""Field checks for the settings pages (Qt-free): one sentence per problem, or None."""

from __future__ import annotations

from urllib.parse import urlsplit


def check_url(value: str, *, what: str, required: bool = False) -> str | None:
    value = value.strip()
    if not value:
        return f"{what} is required." if required else None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"{what} must start with http:// or https:// and name a host (got “{value}”)."
    if any(c.isspace() for c in value):
        return f"{what} may not contain spaces."
    try:
        parts.port  # noqa: B018 - raises for a bad port
    except ValueError:
        return f"{what} has an invalid port number."
    return None


def check_model(value: str, *, provider: str) -> str | None:
    value = value.strip()
    if not value:
        return f"Pick or type a model for {provider}."
    if any(c.isspace() for c in value):
        return f"The {provider} model name may not contain spaces."
    return None

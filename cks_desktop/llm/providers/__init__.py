"""One adapter per vendor SDK, each imported only when used."""

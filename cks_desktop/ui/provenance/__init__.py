"""Provenance in the window: the inspector's Sources section (``sources_view``)
and the document viewer it opens at a passage (``viewer``)."""

"""Provenance in the window (issue 17 §3): the inspector's Sources section (``sources_view``)
and the document viewer it opens at a passage (``viewer``)."""

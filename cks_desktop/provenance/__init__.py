"""Provenance: where every object and relation came from.

- ``model``: the read-side values (``Evidence``, ``Source``, ``Authorship``) and the op types.
- ``queries``: sources of an object or relation, objects of a document span, what a document
  alone supports (for removing it), and who wrote a fact (derived from the change log).
- ``documents``: removing a document with its evidence, and the objects left without a source.

Evidence is WRITTEN only through the graph's batch ops (``add_evidence``, ``remove_evidence``:
``graph/evidence.py``), in the same transaction and change as the facts it supports. Qt-free.
"""

from __future__ import annotations

from cks_desktop.provenance.model import Authorship, Evidence, Source

__all__ = ["Authorship", "Evidence", "Source"]

"""The graph area of the window (``view.GraphView``) and its parts; see docs/graph-view.md.

This ``__init__`` imports nothing on purpose: the layout worker process
imports ``cks_desktop.ui.graph.layout`` and must not pay for (or depend on)
Qt. Qt-free modules: ``model``/``adjacency``, ``viewstate``, ``viewport``,
``spatial``, ``placement``, ``layout``, ``positions``, ``editor``, ``palette``.
"""

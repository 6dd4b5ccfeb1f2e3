"""The desktop user interface: the only package (with ``app.py``) that imports Qt.

Each feature has its own folder (``sessions/``, ``chat/``, ``approval/``,
``settings/``, ``graph/``). Logic that can be tested without widgets lives in
Qt-free presenters/models beside the widgets; the widgets stay thin.
"""

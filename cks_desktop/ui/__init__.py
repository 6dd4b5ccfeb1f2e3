"""The only package that imports PySide6 (app.py aside). One sub-package per feature."""

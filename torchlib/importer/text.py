"""TfIdfVectorizer on integer tokens (string tokens have no torch tensor)."""

from __future__ import annotations

import torch

from torchlib.importer._common import impl


def _pool_ngrams(pool: tuple[int, ...], counts: tuple[int, ...]) -> list[tuple[int, torch.Tensor, int]]:
    """(gram length, its n-grams [M, length], index of the first in pool order) per length."""
    out = []
    first = 0
    for g, start in enumerate(counts, start=1):
        end = counts[g] if g < len(counts) else len(pool)
        grams = torch.tensor(pool[start:end], dtype=torch.int64).reshape(-1, g)
        out.append((g, grams, first))
        first += grams.shape[0]
    return out


@impl("TfIdfVectorizer", since=9, max_gram_length=1, max_skip_count=0, min_gram_length=1, mode="TF",
      ngram_counts=(), ngram_indexes=(), pool_int64s=(), pool_strings=None, weights=None)  # fmt: skip
def tfidf_vectorizer(x: torch.Tensor, *, max_gram_length: int, max_skip_count: int, min_gram_length: int, mode: str,
                     ngram_counts: tuple[int, ...], ngram_indexes: tuple[int, ...], pool_int64s: tuple[int, ...],
                     pool_strings: tuple[str, ...] | None, weights: tuple[float, ...] | None) -> torch.Tensor:
    """Counts, per row of x ([C] or [N, C]), each pool n-gram of length min..max_gram_length whose
    tokens sit 1 + skip apart (skip 0..max_skip_count; unigrams once), into the output column
    ngram_indexes gives it; mode TF: the counts, IDF: weight where present, TFIDF: count x weight."""
    if pool_strings:
        raise ValueError("TfIdfVectorizer with pool_strings: string tensors cannot be imported into torch")
    rows = x.reshape(1, -1) if x.dim() == 1 else x
    tokens = rows.to(torch.int64)
    width = max(ngram_indexes) + 1 if ngram_indexes else 0
    counts = torch.zeros(rows.shape[0], width, dtype=torch.float32)
    index = torch.tensor(ngram_indexes, dtype=torch.int64)
    for g, grams, first in _pool_ngrams(pool_int64s, ngram_counts):
        if g < min_gram_length or g > max_gram_length or grams.shape[0] == 0:
            continue
        for skip in range(max_skip_count + 1 if g > 1 else 1):
            span = (g - 1) * (skip + 1) + 1
            if span > tokens.shape[1]:
                break
            windows = tokens.unfold(1, span, 1)[..., :: skip + 1]  # [N, W, g]
            hits = (windows.unsqueeze(2) == grams).all(-1).sum(1).to(torch.float32)  # [N, M]
            counts = counts.index_add(1, index[first : first + grams.shape[0]], hits)
    w = torch.tensor(weights, dtype=torch.float32) if weights else torch.ones(len(ngram_indexes))
    per_column = torch.zeros(width).index_copy(0, index, w) if width else torch.zeros(0)
    if mode == "IDF":
        counts = (counts > 0).to(torch.float32) * per_column
    elif mode == "TFIDF":
        counts = counts * per_column
    elif mode != "TF":
        raise ValueError(f"TfIdfVectorizer mode {mode!r}: expected TF, IDF or TFIDF")
    return counts.reshape(-1) if x.dim() == 1 else counts

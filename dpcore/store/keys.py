"""Keyed identifiers (issue 55): what the store keeps about data reveals nothing about the rows.

A fingerprint of the data is a function of every row.  Stored or hashed into a chain head as a plain
digest, it lets anyone who knows every row but one recompute it for both candidates and name the
data with certainty, at ε = 0.  So the store keys every data-derived value with a secret it generates
once (:data:`dpcore.store.tables.store_secret`, never exported or shown): an HMAC-SHA256
(RFC 2104) is a pseudorandom function of its input for whoever lacks the key, so the keyed value
is, to a viewer or an analyst, a random string that only says "the same as before" or not.

The content key ignores how the rows were written: :func:`content_digest` hashes the parsed rows
of the used columns (float64) and the privacy unit (as text), sorted, so the same people give
the same account whether they came as a listed data set or an upload, in any encoding, line
endings, row order or file name.
"""
from __future__ import annotations

import hashlib
import hmac

import numpy as np

#: What :func:`content_digest` hashes first: a change of the canonical form is a change of this tag.
_CONTENT_TAG = b"dpcore-content/1\n"


def keyed(secret: str, purpose: str, value: str | bytes) -> str:
    """HMAC-SHA256 of ``value`` under the store's ``secret``, separated by ``purpose``.

    Parameters
    ----------
    secret : str
        The store's key, hex (32 bytes from :mod:`secrets`, kept in ``store_secret``).
    purpose : str
        What the value is ("fingerprint", "settings", "head:<table>"): equal values for different
        purposes get unrelated keys.
    value : str or bytes
        What is keyed (UTF-8 for text).

    Returns
    -------
    str
        64 hex digits.

    Notes
    -----
    Privacy: without ``secret`` the output is a pseudorandom function of ``value`` (HMAC, RFC 2104;
    Bellare 2006), so it reveals only whether two keyed values are equal.

    Examples
    --------
    >>> k = "00" * 32
    >>> keyed(k, "fingerprint", "abc") == keyed(k, "fingerprint", b"abc") != keyed(k, "settings", "abc")
    True
    """
    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return hmac.new(bytes.fromhex(secret), purpose.encode("utf-8") + b"\0" + data, hashlib.sha256).hexdigest()


def content_digest(X, units=None) -> str:
    """A digest of the people in the rows: the same people give the same digest, whatever file or ids held them.

    Without a person column every row is its own person, and the digest is one of the multiset of
    rows: their float64 bits (``-0.0`` read as ``0.0``), sorted, hashed with the shape.  With a
    person column it is one of the multiset of *people*, each person the multiset of her rows: the
    same sorted rows, then how they are grouped into people (:func:`_grouping`), never the ids
    themselves.  So column names, the file's encoding, line endings, trailing empty lines, the
    order of the rows, and the ids (renamed one to one: shifted, written as text, permuted, of
    another type) do not change it; a changed value, an added or removed row, or rows grouped into
    people differently do (issue 68).

    Parameters
    ----------
    X : array-like of shape (n, d)
        The used columns, as the estimator gets them.
    units : array-like of shape (n,) or None
        Each row's privacy unit (the person column), or None for data without one.  Only which rows
        share a unit matters: ``7`` and ``"7"`` in one column are one person (ids of mixed types are
        compared as text).

    Returns
    -------
    str
        64 hex digits (SHA-256).  An unkeyed digest: never store, show or export it; hand it to
        :meth:`dpcore.store.ReleaseStore.register_dataset` (which keys it) or key it with
        :meth:`dpcore.store.ReleaseStore.content_key`.

    Raises
    ------
    ValueError
        ``X`` is not two-dimensional or ``units`` has another length.

    Notes
    -----
    Not a privacy mechanism: the digest is a deterministic function of every row.  Privacy comes
    from keying it (:func:`keyed`, an HMAC under the store's secret) before it is kept anywhere.

    The canonical form: ``_CONTENT_TAG``, ``"n d"``, the rows as big-endian 64-bit words sorted
    lexicographically, then, when some person has more than one row, ``"people"`` and the grouping.
    Data in which every person has one row give the digest of the same rows without a person
    column (the same people), which is also the digest data without one had before issue 68, so
    their accounts keep their keys.  Time and memory O(n log n), vectorised: about 0.1 s for
    139,000 Gowalla check-ins (``benchmarks/content_digest_speed.py``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> content_digest(X) == content_digest(X[::-1])
    True
    >>> content_digest(X, units=[7, 7, 8]) == content_digest(X, units=["b", "b", "a"])   # renamed ids
    True
    >>> content_digest(X, units=[7, 7, 8]) == content_digest(X, units=[7, 8, 8])         # another grouping
    False
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"the rows to fingerprint must form a 2-d array, got shape {X.shape}")
    X = np.ascontiguousarray(X + 0.0)          # -0.0 and 0.0 are the same value once parsed
    n, d = X.shape
    person = None if units is None else _people(units, n)
    h = hashlib.sha256(_CONTENT_TAG + f"{n} {d}\n".encode())
    bits = X.view(np.uint64)
    # The rows sorted lexicographically on their bits (a canonical order, not the numeric one): as the
    # rows' big-endian bytes sort, which is what the digest hashed before issue 68.
    order = np.lexsort(bits.T[::-1]) if n > 1 and d else np.arange(n)
    rows = np.take(bits, order, axis=0)        # (np.take: many times faster than bits[order] on 2-d arrays)
    h.update(rows.astype(">u8").tobytes())
    if person is not None and n and np.bincount(person).max() > 1:
        h.update(_grouping(rows, person[order]))
    return h.hexdigest()


def _people(units, n: int) -> np.ndarray:
    """Each row's person as 0, 1, ... in order of first appearance (only equality of ids is kept)."""
    u = np.asarray(units)
    if u.shape != (n,):
        raise ValueError(f"units must have one entry per row ({n}), got shape {u.shape}")
    if u.dtype == object:
        u = u.astype(str)          # mixed types: 7 and "7" are one person, as the file wrote them
    import pandas as pd  # factorize hashes the ids: several times faster than sorting text
    codes, _ = pd.factorize(u, use_na_sentinel=False)
    return codes


def _grouping(rows: np.ndarray, person: np.ndarray) -> bytes:
    """How the sorted rows are grouped into people, as canonical bytes (the ids play no part).

    Each row is named by its dense rank among the distinct rows (equal rows have one rank, and the
    rows' values are hashed before, in that order); each person is the ascending sequence of her
    rows' ranks; the people are sorted by their number of rows, then lexicographically by the
    sequence.  Written as the distinct sizes and how many people have each, then every person's
    sequence in that order: identical people appear as often as they occur (a multiset).
    """
    n = len(rows)
    new = np.ones(n, dtype=bool)
    new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    rank = (np.cumsum(new) - 1).astype(np.uint64)
    # Each person's ranks together and ascending: one sort of (person, rank) packed in 64 bits (n < 2^32).
    grouped = np.sort((person.astype(np.uint64) << np.uint64(32)) | rank) & np.uint64(0xFFFFFFFF)
    sizes = np.bincount(person)
    starts = np.cumsum(sizes) - sizes
    # The people by size (a stable sort, so ties keep their order until sorted by content below),
    # and every person's sequence laid out in that order with one gather.
    people = np.argsort(sizes, kind="stable")
    size_of = sizes[people]
    offset = np.cumsum(size_of) - size_of
    seq = grouped[np.repeat(starts[people] - offset, size_of) + np.arange(n)]
    distinct, first, count = np.unique(size_of, return_index=True, return_counts=True)
    for s, f, c in zip(distinct.tolist(), first.tolist(), count.tolist()):
        if c > 1:                # c people of s rows each: sort their sequences lexicographically
            block = seq[offset[f]:offset[f] + s * c].reshape(c, s).astype(">u8")
            records = block.view(np.dtype((np.void, 8 * s))).ravel()
            seq[offset[f]:offset[f] + s * c] = np.take(block, np.argsort(records), axis=0).ravel()
    head = np.stack([distinct, count], axis=1).astype(">u8")
    return b"people\n" + len(distinct).to_bytes(8, "big") + head.tobytes() + seq.astype(">u8").tobytes()


def former_digests(X, units=None) -> tuple[str, ...]:
    """The digests these rows had under dpcore's former canonical forms: how accounts made before are found.

    A store keeps the keyed digest a data set was registered with, and cannot recompute it (it never
    holds the rows).  Data with a person column were registered before issue 68 under a digest of
    the ids' names (:func:`_digest_by_names`); the app hands these former digests to
    :meth:`dpcore.store.ReleaseStore.register_dataset` and
    :meth:`~dpcore.store.ReleaseStore.dataset_for_fingerprint` beside :func:`content_digest`, so such
    an account keeps working under its name and is found again by the same file.  Data without a
    person column have no former form (their digest did not change).

    Parameters
    ----------
    X, units
        As :func:`content_digest`.

    Returns
    -------
    tuple of str
        Unkeyed digests, oldest form last; empty without ``units``.  Never store, show or export them.

    Raises
    ------
    ValueError
        As :func:`content_digest`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> former_digests(X), len(former_digests(X, units=[7, 8]))
    ((), 1)
    """
    return () if units is None else (_digest_by_names(X, units),)


def _digest_by_names(X, units) -> str:
    """The content digest of data with a person column as dpcore computed it before issue 68 (kept verbatim).

    Each row a fixed-width big-endian record (its unit's rank among the units' names as text, then its
    values' bits), sorted as bytes, hashed after the sorted names.  A renaming of the ids changes it:
    that is why :func:`content_digest` replaced it.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"the rows to fingerprint must form a 2-d array, got shape {X.shape}")
    X = X + 0.0
    n, d = X.shape
    u = np.asarray(units)
    if u.shape != (n,):
        raise ValueError(f"units must have one entry per row ({n}), got shape {u.shape}")
    h = hashlib.sha256(_CONTENT_TAG + f"{n} {d}\n".encode())
    rows = np.empty((n, 1 + d), dtype=np.uint64)
    rows[:, 1:] = X.view(np.uint64)
    if u.dtype.kind in "biuf":
        distinct, inverse = np.unique(u, return_inverse=True)
    else:                        # the same distinct texts and inverse as np.unique, without sorting every row's text
        import pandas as pd
        inverse, distinct = pd.factorize(u.astype(str), use_na_sentinel=False)
    text = np.asarray(distinct).astype(str)
    rank = np.empty(len(text), dtype=np.int64)
    rank[np.argsort(text, kind="stable")] = np.arange(len(text))
    rows[:, 0] = rank[inverse.reshape(-1)]
    h.update(b"units\n")
    for name in np.sort(text):
        b = str(name).encode("utf-8")
        h.update(len(b).to_bytes(8, "little") + b)
    if n:                        # the big-endian records sorted as bytes: lexicographic on the 64-bit words
        rows = np.take(rows, np.lexsort(rows.T[::-1]), axis=0)
    h.update(rows.astype(">u8").tobytes())
    return h.hexdigest()

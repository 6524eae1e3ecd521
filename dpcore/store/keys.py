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
    """A digest of the rows as parsed: the same people give the same digest, whatever file held them.

    The rows of ``X`` (float64, ``-0.0`` read as ``0.0``) and their privacy units (as text) are sorted
    (each row a fixed-width record: its unit's rank among the units' names, then its values' bits), then
    hashed with their shape and the units' names.  Column
    names, the file's encoding, line endings, trailing empty lines and the order of the rows do not
    change it; a changed value, an added or removed row, or another unit does.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The used columns, as the estimator gets them.
    units : array-like of shape (n,) or None
        Each row's privacy unit (the person column), or None for data without one.

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

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> content_digest(X) == content_digest(X[::-1])
    True
    >>> content_digest(X, units=["a", "b"]) == content_digest(X, units=["b", "a"])
    False
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"the rows to fingerprint must form a 2-d array, got shape {X.shape}")
    X = X + 0.0                    # -0.0 and 0.0 are the same value once parsed
    n, d = X.shape
    h = hashlib.sha256(_CONTENT_TAG + f"{n} {d}\n".encode())
    lead = 0 if units is None else 1
    # Each row as one fixed-width big-endian record (its unit's rank, then its values' bits), sorted as
    # bytes: a canonical order (not the numeric one) that numpy sorts fast even for wide rows.
    rows = np.empty((n, lead + d), dtype=">u8")
    rows[:, lead:] = X.view("<u8")
    if units is not None:
        u = np.asarray(units)
        if u.shape != (n,):
            raise ValueError(f"units must have one entry per row ({n}), got shape {u.shape}")
        # Distinct units first (fast on integer ids), then ranked by their text: 7 and "7" are one person.
        distinct, inverse = np.unique(u if u.dtype.kind in "biuf" else u.astype(str), return_inverse=True)
        text = distinct.astype(str)
        rank = np.empty(len(text), dtype=np.int64)
        rank[np.argsort(text, kind="stable")] = np.arange(len(text))
        rows[:, 0] = rank[inverse.reshape(-1)]
        h.update(b"units\n")
        for name in np.sort(text):     # the names once, in order; each row holds its unit's rank among them
            b = str(name).encode("utf-8")
            h.update(len(b).to_bytes(8, "little") + b)
    if n and lead + d:
        records = rows.view(np.dtype((np.void, 8 * (lead + d)))).ravel()
        rows = rows[np.argsort(records, kind="stable")]
    h.update(rows.tobytes())
    return h.hexdigest()

"""The account of a data set: one per people, keyed by content, asked about by owners only (issues 29, 55).

A base of :class:`~dpcore.store.ReleaseStore`: finding and registering a data set's row, the keyed
content fingerprint (:mod:`dpcore.store.keys`), the owner's "is this content registered?" and the keyed
chain heads.
"""
from __future__ import annotations

import sqlalchemy as sa

from .publications import Publications
from .records import _flat
from .tables import _canon, _now, datasets


class Accounts(Publications):
    """Data sets and their keyed fingerprints (a base of :class:`~dpcore.store.ReleaseStore`)."""

    def _dataset_row(self, conn, name: str, *, lock: bool = False):
        q = sa.select(datasets).where(datasets.c.name == name)
        if lock:
            q = q.with_for_update()
        return conn.execute(q).first()

    def _ensure_dataset(self, conn, name: str, *, fingerprint=None, bounds=None, description="",
                        public=False, former=()):
        # The fingerprint is keyed before it is compared or kept (issue 55): the row, its chain and any
        # sentence below hold only an HMAC under the store's secret, never a digest of the rows.
        # ``former``: the same content's digests under dpcore's former canonical forms (issue 68), which
        # the rows of older accounts hold; they are matched, never written.
        known = self._keyed_forms(fingerprint, former, conn)
        fingerprint = known[0] if known else None
        row = self._dataset_row(conn, name, lock=True)
        if row is not None:
            if fingerprint is not None and row.fingerprint is not None and row.fingerprint not in known \
                    and not self._legacy_dataset(row.id, conn):
                # Only an owner (or the operator) learns that the content differs: anyone else gets the
                # refusal an unregistered data set gets, so a decoy under the owner's name is no oracle.
                self._permit(conn, "register")
                raise ValueError(f"the store already has a dataset named {name!r} with another fingerprint: "
                                 "it is different data. Register it under another name.")
            if public and not row.public:
                raise ValueError(f"dataset {name!r} is registered as private data; it cannot be declared public "
                                 "afterwards (the store is append-only). Register the public data under another "
                                 "name.")
            return row
        self._permit(conn, "register")
        if fingerprint is not None:
            # One account per data set: the same content under another name is the same people.
            other = conn.execute(sa.select(datasets.c.name).where(datasets.c.fingerprint.in_(known))
                                 .order_by(datasets.c.id).limit(1)).scalar()
            if other is not None:
                raise ValueError(f"this data is already registered as {other!r} (the same content): its account "
                                 "and total apply. Use that name.")
        if bounds is not None:
            lo, hi = bounds
            bounds = _canon({"lower": [float(v) for v in _flat(lo)], "upper": [float(v) for v in _flat(hi)]})
        self._append(conn, datasets, {"name": name, "fingerprint": fingerprint,
                                      "bounds": bounds, "description": str(description), "public": bool(public),
                                      "created": _now()})
        return self._dataset_row(conn, name, lock=True)

    def dataset_for_fingerprint(self, fingerprint: str, *, former=()) -> str | None:
        """The name under which this content is already registered, if any: one account per data set.

        The data owner's question alone (issue 55): "is this content registered?" answered to anyone
        else tells data sets that differ in one person apart at no cost in ε.

        Parameters
        ----------
        fingerprint : str
            The content fingerprint as given to :meth:`register_dataset` (the app gives
            :func:`dpcore.store.keys.content_digest` of the parsed rows); the store keys it.
        former : sequence of str, optional
            The same content's fingerprints under former canonical forms
            (:func:`dpcore.store.keys.former_digests`): an account registered with one of them is found too.

        Returns
        -------
        str or None
            The first dataset registered with this fingerprint (or, failing that, a former one).

        Raises
        ------
        AccessDeniedError
            On a handle acting for someone who is not an owner (:meth:`acting_as`).

        Examples
        --------
        >>> from dpcore.store import ReleaseStore
        >>> store = ReleaseStore(":memory:")
        >>> store.register_dataset("upload:patients.csv", fingerprint="d1")
        >>> store.dataset_for_fingerprint("d1"), store.dataset_for_fingerprint("d2")
        ('upload:patients.csv', None)
        """
        with self._read() as conn:
            self._permit(conn, "register")
            for key in self._keyed_forms(fingerprint, former, conn):     # the current form first
                name = conn.execute(sa.select(datasets.c.name).where(datasets.c.fingerprint == key)
                                    .order_by(datasets.c.id).limit(1)).scalar()
                if name is not None:
                    return name
            return None

    def _keyed_forms(self, fingerprint, former, conn) -> list[str]:
        """The keyed fingerprint, then the keyed former forms of the same content ([] without a fingerprint)."""
        if fingerprint is None:
            return []
        return [self._keyed("fingerprint", str(f), conn) for f in (fingerprint, *former)]

    def content_key(self, X, units=None) -> str:
        """The store's keyed content key of these rows: equal for the same people, random to anyone else.

        Parameters
        ----------
        X : array-like of shape (n, d)
        units : array-like of shape (n,) or None
            As :func:`dpcore.store.keys.content_digest`.

        Returns
        -------
        str
            64 hex digits: the HMAC-SHA256, under this store's secret, of the rows' canonical digest;
            what :meth:`dataset_info` shows as ``fingerprint`` for data registered with that digest.

        Notes
        -----
        Privacy: a pseudorandom function of the rows for whoever lacks the store's secret (RFC 2104), so
        showing it tells nothing about the rows; two stores give unrelated keys for the same data.

        Examples
        --------
        >>> import numpy as np
        >>> from dpcore.store import ReleaseStore
        >>> store = ReleaseStore(":memory:")
        >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> store.content_key(X) == store.content_key(X[::-1])
        True
        """
        from .keys import content_digest
        return self._keyed("fingerprint", content_digest(X, units))

    def _public_head(self, table: str, row_hash: str, conn=None) -> str:
        """What a chain's head is shown as: keyed, so it says "changed or not" and nothing about the rows.

        A head is a hash of every row of its chain; rows written by an older dpcore hold plain
        fingerprints, and even keyed rows hold draws' timing.  Its HMAC under the store's secret changes
        whenever the head does (a rewrite or a truncation is still seen), and a rewriter cannot find
        another history with the same keyed head (the HMAC is as collision-resistant as SHA-256).
        """
        return self._keyed("head:" + table, row_hash, conn)



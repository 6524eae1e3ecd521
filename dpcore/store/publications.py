"""Reading recorded draws and publishing them: the part of the release store the gallery uses (issue 31).

A *draw* is a private result recorded in the dataset's account before anyone saw it
(:meth:`ReleaseStore.record`); it has been charged.  A *publication* is a draw its author chose to
share: :meth:`Publications.publish` appends it to the hash-chained ``publications`` table with who
published it and when.  Publishing spends nothing (post-processing of a charged draw), and leaving a
draw unpublished refunds nothing.  The gallery lists :meth:`Publications.published`;
:meth:`ReleaseStore.releases` stays the full ledger of draws.
"""
from __future__ import annotations

import datetime as _dt
import json

import sqlalchemy as sa

from ..release.build import REFUSAL_FORMAT
from .records import StoredRelease
from .roles import Roles
from .tables import _now, datasets, publications, releases


class Publications(Roles):
    """Draws by id, publication and the list of publications (a base of :class:`ReleaseStore`)."""

    def _select_releases(self, *, dataset: str | None = None, ids=None, published_only: bool = False):
        pub = publications.alias("pub")
        q = (sa.select(releases, datasets.c.name.label("dataset_name"), pub.c.who.label("published_by"),
                       pub.c.created.label("published_at"))
             .join(datasets, releases.c.dataset_id == datasets.c.id)
             .join(pub, pub.c.release_id == releases.c.id, isouter=not published_only)
             .order_by(pub.c.id if published_only else releases.c.id))
        if dataset is not None:
            q = q.where(datasets.c.name == dataset)
        if ids is not None:
            q = q.where(releases.c.id.in_([int(i) for i in ids]))
        with self._read() as conn:
            rows = conn.execute(q).all()
        return [StoredRelease(id=r.id, dataset=r.dataset_name, created=_dt.datetime.fromisoformat(r.created),
                              who=r.who, epsilon=float(r.epsilon), delta=float(r.delta), algorithm=r.algorithm,
                              release=json.loads(r.body), hash=r.row_hash, simulation=bool(r.simulation),
                              published_by=r.published_by,
                              published_at=None if r.published_at is None else
                              _dt.datetime.fromisoformat(r.published_at))
                for r in rows]

    def release(self, release_id: int) -> StoredRelease:
        """One recorded draw by id (published or not).

        Raises
        ------
        KeyError
            No release has this id.
        """
        found = self._select_releases(ids=[release_id])
        if not found:
            raise KeyError(f"the store has no release #{release_id}")
        return found[0]

    def publication(self, release_id: int) -> tuple[str, _dt.datetime] | None:
        """Who published draw ``release_id`` and when, or None when it is not published (reads no body)."""
        with self._read() as conn:
            r = conn.execute(sa.select(publications.c.who, publications.c.created)
                             .where(publications.c.release_id == int(release_id))).first()
        return None if r is None else (r.who, _dt.datetime.fromisoformat(r.created))

    # -- publications (issue 31): a draw is a use of the data; publishing one is a separate act --------
    def publish(self, release_id: int, *, who: str = "") -> int:
        """Publish a recorded draw: it enters :meth:`published` (the gallery) with who published it and when.

        Publishing costs no epsilon: it is post-processing of a draw already charged to the dataset's
        account when it was recorded.  Leaving a draw unpublished refunds nothing.  Publishing the
        same draw twice returns the first publication's id.

        Parameters
        ----------
        release_id : int
            From :meth:`record` / :meth:`record_draw`.
        who : str
            Who publishes it (the signed-in identity in the app).

        Returns
        -------
        int, the publication's id.

        Raises
        ------
        KeyError
            No release has this id.
        ValueError
            It records a refusal (:meth:`ReleaseStore.record_refusal`), not a result.
        AccessDeniedError
            A handle acting for a viewer, or for an analyst the owner has not allowed to publish
            (:meth:`~dpcore.store.ReleaseStore.acting_as`).
        StoreLockedError, StoreUnavailableError, StoreError
            The database cannot take the write.
        """
        with self._write() as conn:
            self._permit(conn, "publish")
            body = conn.execute(sa.select(releases.c.body).where(releases.c.id == int(release_id))).scalar()
            if body is None:
                raise KeyError(f"the store has no release #{release_id}: only a recorded draw can be published")
            if json.loads(body).get("format") == REFUSAL_FORMAT:
                raise ValueError(f"#{release_id} records a refusal (budget spent, no result): there is nothing to "
                                 "publish")
            done = conn.execute(sa.select(publications.c.id)
                                .where(publications.c.release_id == int(release_id))).scalar()
            if done is not None:
                return int(done)
            pid, _ = self._append(conn, publications, {"release_id": int(release_id), "who": self._who(who),
                                                       "created": _now()})
            return pid

    def published(self, dataset: str | None = None) -> list[StoredRelease]:
        """The published draws (on ``dataset``, or on all), in the order they were published.

        :meth:`releases` stays the full ledger: every draw, published or not.
        """
        return self._select_releases(dataset=dataset, published_only=True)

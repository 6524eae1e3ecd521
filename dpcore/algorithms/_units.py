"""Contribution bounding for a privacy unit (issue 23): the part of ``fit`` that bounds each unit's rows.

With ``fit(X, privacy_id=ids)`` neighbouring datasets differ by all the rows of one unit (a user).
Each unit keeps at most L = ``max_contributions`` rows (``"sample"``, a secret keyed hash chooses them)
or keeps every row at weight ``min(1, L / m)`` (``"weight"``, Amin et al. 2019); the estimator's
:class:`~dpcore.privacy.mechanisms.NoiseSource` then multiplies every sensitivity by L and the ledger
and ``privacy_unit_`` record the unit, L and the rule.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..advisor.plan import ALGORITHMS
from ..privacy.accountant import BudgetLedger
from ..privacy.mechanisms import NoiseSource
from ..utils.domain import Domain


class PrivacyUnitMixin:
    """The privacy-unit steps of :class:`~dpcore.algorithms.base.DPClusterer` (a mixin of it)."""

    # Declared here for the type checker; DPClusterer defines them.
    display_name: ClassVar[str]
    private: ClassVar[bool]
    budget_: BudgetLedger

    #: Tag: the estimator's aggregates accept weighted rows (``contribution_bounding="weight"``).
    supports_weighting: ClassVar[bool] = False
    #: Why a class without ``supports_weighting`` samples only (the end of the refusal's sentence).
    weighting_refusal: ClassVar[str] = "its mechanisms are not analysed for weighted rows"

    def _unit_config(self, privacy_id, n_rows=None) -> tuple[int, str] | None:
        """Check the unit parameters: ``(L, "sample" | "weight")``, or None for a row-level fit."""
        L = getattr(self, "max_contributions", None)
        how = getattr(self, "contribution_bounding", "sample")
        name = self.display_name or type(self).__name__
        self.privacy_unit_: dict | None = None
        if privacy_id is None or not self.private:
            if L is not None and self.private:
                raise ValueError("max_contributions bounds the rows of each privacy unit: pass fit(X, privacy_id=ids) "
                                 "with the unit (e.g. the user) of every row, or leave max_contributions=None for a "
                                 "row-level release")
            return None
        if L is None:
            raise ValueError("a privacy unit needs a public bound on its rows: set max_contributions=L (choose it "
                             "without looking at the data, or with dpcore.privacy.units.choose_max_contributions)")
        # max_contributions and contribution_bounding each passed their constraints in _begin_fit
        # (dpcore.algorithms.parameters.COMMON_CONSTRAINTS); what is left are rules between them and the fit.
        L = int(L)
        if how == "weight" and not self.supports_weighting:
            raise TypeError(f"{name} supports contribution_bounding='sample' only: {self.weighting_refusal}. "
                            f"Weighting is available for {_weighting_names()}")
        if n_rows is not None and np.shape(privacy_id) != (n_rows,):
            raise ValueError(f"privacy_id must give one unit id per row: {n_rows} rows, "
                             f"{np.shape(privacy_id)} ids")
        return L, str(how)

    def _rows_per_unit(self) -> int:
        """L of the fitted privacy unit (1 for a row-level fit): every sensitivity is L rows'."""
        return int((getattr(self, "privacy_unit_", None) or {}).get("max_contributions") or 1)

    def _record_unit(self, L: int, how: str, noise: NoiseSource, unit: str) -> None:
        # Every mechanism's sensitivity is multiplied by L from here on (NoiseSource.contribution_factor).
        noise.contribution_factor = int(L)
        unit_info = {"unit": unit, "max_contributions": int(L), "bounding": how}
        self.privacy_unit_ = unit_info
        self.budget_.privacy_unit = dict(unit_info)

    def _bound_units(self, Xc, privacy_id, noise: NoiseSource, domain: Domain):
        """Bound each privacy unit's rows in memory: ``(rows, weights)``.

        Sampling keeps at most L rows of each unit (weights None); weighting keeps every row and
        returns its integer weight ``min(2^B, floor(L 2^B / m))`` (units of ``2^-B``,
        :func:`~dpcore.utils.contributions.contribution_weights`), for the estimators that declare
        ``supports_weighting`` (the others were refused in :meth:`_unit_config`).  Row level: (rows, None).
        """
        config = self._unit_config(privacy_id, Xc.shape[0])
        if config is None:
            return Xc, None
        from ..utils.contributions import HASH_PRIME, contribution_weights, sample_mask, unit_codes
        L, how = config
        codes, _ = unit_codes(privacy_id)
        key = int(noise.rng.integers(0, HASH_PRIME ** 2))   # secret: which rows are kept is unpredictable
        self._record_unit(L, how, noise, _unit_name(privacy_id))
        if how == "weight":
            return Xc, contribution_weights(codes, L)
        return Xc[sample_mask(Xc, codes, L, domain, key)], None

    def _pop_row_weights(self) -> np.ndarray | None:
        """The weights :meth:`_bound_units` gave this fit's rows (int, units of ``2^-WEIGHT_BITS``), or None.

        Taken once by an in-memory estimator that declares ``supports_weighting``: an array of the
        private length n must not stay on a fitted estimator (issue 19).
        """
        return vars(self).pop("_row_weights", None)

    def _bound_source(self, src, X, privacy_id, config, noise: NoiseSource, domain: Domain):
        """Contribution bounding for a source fit: returns the bounded (or weighted) source and its count."""
        from ..sources import ArraySource, DataSource
        from ..utils.contributions import (
            HASH_PRIME,
            WEIGHT_BITS,
            contribution_weights,
            sample_mask,
            unit_codes,
        )
        L, how = config
        key = int(noise.rng.integers(0, HASH_PRIME ** 2))
        if isinstance(X, DataSource):
            from ..sources.ibis_source import IbisSource
            if not isinstance(privacy_id, str) or not isinstance(src, IbisSource):
                raise TypeError("on a data source, privacy_id is the name of its unit column (e.g. 'user_id'), and "
                                "the source must be a file, Spark or database source (dpcore.sources), where the "
                                "units are bounded")
            if how == "weight":
                from ..sources.weighting import weighted
                src = weighted(src, privacy_id, L, weight_bits=WEIGHT_BITS)
            else:
                from ..sources.sampling import sampled
                src = sampled(src, privacy_id, L, key, domain)
            self._record_unit(L, how, noise, privacy_id)
            return src, src.count()
        from ..sources.memory import WeightedArraySource
        codes, _ = unit_codes(privacy_id)
        if how == "weight":
            src = WeightedArraySource(src.X, contribution_weights(codes, L), weight_bits=WEIGHT_BITS,
                                      columns=src.columns)
        else:
            Xc, _ = domain.clip(src.X)
            src = ArraySource(src.X[sample_mask(Xc, codes, L, domain, key)], src.columns, min_samples=0)
        self._record_unit(L, how, noise, _unit_name(privacy_id))
        return src, src.count()


def _unit_name(privacy_id) -> str:
    """What the unit column is called (a pandas Series' name), for the release's privacy unit."""
    name = getattr(privacy_id, "name", None)
    return str(name) if name is not None else "privacy_id"


def _weighting_names() -> str:
    """The display names of the registered estimators that declare ``supports_weighting``."""
    names = [cls.display_name for cls in ALGORITHMS.values() if cls.supports_weighting]
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else "no estimator"

"""The advisor: which algorithm (or which set for ``auto``) to run for public inputs, and why (issue 25).

It holds

* :mod:`~dpcore.advisor.model` — the calibration table (package data: every ``calibrated`` estimator
  class fitted on Gaussian mixtures and real sets, ``benchmarks/advisor_calibration.py``) and the
  prediction model over it (:func:`~dpcore.advisor.model.predict`,
  :func:`~dpcore.advisor.model.trivial_factor`, :func:`~dpcore.advisor.model.calibrated_keys`);
* :mod:`~dpcore.advisor.separation_read` — the private read of how separated the clusters are and
  how unequal their sizes, which ``auto`` releases before it chooses its candidates;
* :mod:`~dpcore.advisor.plan` — the plans: the advisor's first pick
  (:func:`~dpcore.advisor.plan.advisor_plan`), the candidate set ``auto`` runs
  (:func:`~dpcore.advisor.plan.selection_plan`, :func:`~dpcore.advisor.plan.auto_plan`) and the
  predicted worst case with the read;
* :mod:`~dpcore.advisor.verdict` — the advice on a regime verdict: a class's rule checked against
  the measurements, and the pick named in its warning or refusal.

It sits beneath the algorithms (docs/ARCHITECTURE.md): it imports no estimator; the registry hands
it the classes (:data:`dpcore.advisor.plan.ALGORITHMS`) and each class says whether it is
calibrated.  ``AutoKMeans`` (:mod:`dpcore.algorithms.auto_kmeans`) is the estimator that runs a plan;
estimators' fits do not plan.  The leave-one-out validation is a benchmark
(``benchmarks/advisor_loo.py``).  Everything here reads public inputs and public calibration data
only, except the separation read, which spends its share of ``auto``'s budget through a
:class:`~dpcore.privacy.mechanisms.NoiseSource`.
"""

"""Evaluation: privacy-utility curves on the data owner's data, and the algorithm advisor on public inputs.

``from dpcore import evaluation`` keeps its import path.  Inside: :mod:`.curves` (many releases per
epsilon against the non-private reference; not private) and :mod:`.advisor` (which algorithm for
N, d, k and epsilon, from public inputs only) and :mod:`.preview` (accuracy previews computed from a
recorded release's synopsis: post-processing).
"""
from .accuracy import (
    ACCURACY_EPSILONS,
    AccuracyAnswer,
    centre_error,
    epsilon_for_accuracy,
    lookalike,
    noise_effect,
)
from .advisor import (
    TRIVIAL,
    Advice,
    advice_frame,
    advice_name,
    advise,
    auto_separation_share,
)
from .curves import (
    CENTRE_ERROR,
    DEFAULT_EPSILONS,
    DEFAULT_SEEDS,
    Reference,
    UtilityCurve,
    baseline_key,
    compare_curves,
    curves_frame,
    fit_reference,
    measure_for,
    measured_best,
    privacy_utility_curve,
    subsample,
    utility,
)
from .preview import (
    ReleasePreview,
    epsilon_for_accuracy_from_release,
    lookalike_source,
    previewable,
    release_preview,
    synopsis_points,
)

__all__ = ["noise_effect", "TRIVIAL",
           "Advice", "advice_frame", "advice_name", "advise", "auto_separation_share",
           "CENTRE_ERROR", "DEFAULT_EPSILONS", "DEFAULT_SEEDS", "Reference",
           "UtilityCurve", "baseline_key", "compare_curves", "curves_frame", "fit_reference", "measure_for",
           "measured_best", "privacy_utility_curve", "subsample", "utility", "ACCURACY_EPSILONS", "AccuracyAnswer",
           "centre_error", "epsilon_for_accuracy", "lookalike", "ReleasePreview", "epsilon_for_accuracy_from_release",
           "lookalike_source", "previewable", "release_preview", "synopsis_points"]

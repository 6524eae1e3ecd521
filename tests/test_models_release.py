"""The Release page's model (issue 65, point 9): a plain-language line, the guarantee's terms explained, the
sanitized database's confirmation, file names from titles."""
import numpy as np

from dpcore.formatting import fmt_odds
from dpcore.glossary import GLOSSARY
from dpcore.release import build_release
from ui.models import release as RM
from ui.models.shared import Totals, publish_question


def _release(key="eugkm", **kw):
    from dpcore.algorithms.registry import releasable
    X = np.random.default_rng(0).uniform(-74.0, -73.9, size=(2000, 2))
    est = releasable(key)(epsilon=1.0, bounds=(-74.0, -73.9), **kw).fit(X)
    return build_release(est, algorithm=key, dataset="nyc_taxi_sample", columns=["longitude", "latitude"],
                         kind="trips")


def test_the_page_says_in_plain_words_what_publishing_does():
    m = RM.release_model(_release(n_clusters=3), title="NYC taxi 2009–15 (built in)", algorithm_name="EUGkM", k=3,
                         release_id=4)
    assert m.plain.startswith("**In plain words:**") and fmt_odds(1.0) in m.plain and "one trip" in m.plain
    assert "(odds ≤ 2.72×)" in m.heading
    assert "group privacy" in m.guarantee and "**group privacy**" in m.guarantee_help
    assert "**differential privacy**" in m.guarantee_help and "noisy grid synopsis" in m.synopsis
    assert m.stem == "nyc-taxi-2009-15-built-in_eugkm_k3_eps1_release4" and "nyc_taxi_sample" not in m.stem
    for term in ("differential privacy", "group privacy", "discrete Laplace", "budget ledger", "post-processing"):
        assert term in GLOSSARY


def test_publishing_a_sanitized_database_promises_its_points_not_centres():
    rel = _release("sanitize")
    text = publish_question(7, rel, "root on vm (local mode)", Totals("t", "NYC taxi", spent_epsilon=1.0))
    assert "private centres" not in text and "published points and their weights" in text
    assert "“root on vm (local mode)”" in text and "NYC taxi" in text and "None" not in text
    grid = publish_question(8, _release(n_clusters=3), "ana", Totals("t", "NYC taxi", spent_epsilon=1.0))
    assert "its private centres and its noisy grid synopsis" in grid

"""Publishable releases and the session budget account: what a release holds, what it never holds, refusals."""
import csv
import io
import json
import math
import re

import numpy as np
import pytest

import dpcore
from dpcore import release as R
from dpcore.exceptions import BudgetExceededError
from dpcore.explain import attacker_advantage_bound, epsilon_statements, levels_table, posterior_bound
from dpcore.formatting import fmt_delta, fmt_odds, fmt_share
from dpcore.store import ReleaseStore
from dpcore.store.session_budget import SessionBudget


@pytest.fixture(scope="module")
def fitted(blobs):
    X, bounds, _ = blobs
    out = {}
    for key in ("eugkm", "dplloyd"):
        est = dpcore.ALGORITHMS[key](n_clusters=3, epsilon=0.7, bounds=bounds).fit(X)   # unseeded: private
        out[key] = (est, R.build_release(est, algorithm=key, dataset="blobs", columns=["x", "y"]))
    return X, out


def _numbers(cells):
    out = []
    for c in cells:
        try:
            out.append(float(c))
        except ValueError:
            out.append(None)
    return out


def vectors_in(kind, text, columns):
    """Every point (d numbers) written in a release file, read back the way a reader would."""
    d = len(columns)
    vecs = []
    if kind == "json":
        def walk(o):
            if isinstance(o, list) and len(o) == d and all(isinstance(v, (int, float)) for v in o):
                vecs.append([float(v) for v in o])
            elif isinstance(o, list):
                for v in o:
                    walk(v)
            elif isinstance(o, dict):
                for v in o.values():
                    walk(v)
        walk(json.loads(text))
    elif kind == "csv":
        groups = {}
        for r in csv.DictReader(io.StringIO(text)):
            groups.setdefault((r["section"], r["item"]), {})[r["field"]] = r["value"]
        for fields in groups.values():
            if all(c in fields for c in columns):
                vecs.append(_numbers([fields[c] for c in columns]))
    else:  # html: any d consecutive numeric cells of a table row
        for tr in re.findall(r"<tr>(.*?)</tr>", text, flags=re.S):
            nums = _numbers(re.findall(r"<td>(.*?)</td>", tr))
            for i in range(len(nums) - d + 1):
                if all(v is not None for v in nums[i:i + d]):
                    vecs.append(nums[i:i + d])
    return np.array([v for v in vecs if None not in v], dtype=float).reshape(-1, d)


def rows_found(kind, text, X, columns=("x", "y")):
    V = vectors_in(kind, text, list(columns))
    rtol = 1e-5 if kind == "html" else 0.0  # the report prints 6 significant digits
    return [i for i, x in enumerate(X) if np.any(np.all(np.isclose(V, x, rtol=rtol, atol=0.0), axis=1))]


def texts(rel):
    return {"json": R.to_json(rel), "csv": R.to_csv(rel), "html": R.to_html(rel)}


@pytest.mark.parametrize("key", ["eugkm", "dplloyd"])
def test_release_parses_and_holds_the_ledger(fitted, key):
    X, out = fitted
    est, rel = out[key]
    back = json.loads(R.to_json(rel))
    assert [{k: v for k, v in r.items() if k != "noise_scale"} for r in back["ledger"]] == est.budget_.to_records()
    eps_spent = math.fsum(e["epsilon"] for e in back["ledger"])
    assert eps_spent == pytest.approx(back["privacy"]["epsilon_spent"]) and eps_spent <= 0.7 * (1 + 1e-9)
    assert back["privacy"]["epsilon"] == 0.7 and back["privacy"]["delta"] == 0.0
    assert np.allclose(back["centroids"], est.cluster_centers_)
    assert back["bounds"] == {"lower": [0.0, 0.0], "upper": [10.0, 10.0], "note": back["bounds"]["note"]}
    assert back["privacy"]["private"] is True and "random_state" not in back["seed_policy"]
    assert back["package"]["version"] == dpcore.__version__
    assert back["parameters"]["n_clusters"] == 3 and "epsilon" not in back["parameters"]
    if key == "eugkm":
        assert back["synopsis"]["kind"] == "grid"
        assert np.allclose(back["synopsis"]["counts"], est.synopsis_.counts)
    rows = list(csv.DictReader(io.StringIO(R.to_csv(rel))))
    assert sum(r["section"] == "centroid" and r["field"] != "" for r in rows) == 3 * 2   # (a header row, then these)
    assert sum(r["section"] == "ledger" and r["field"] == "name" for r in rows) == len(est.budget_)
    html = R.to_html(rel)
    assert all(e.name in html for e in est.budget_) and "<script" not in html.lower()


@pytest.mark.parametrize("key", ["eugkm", "dplloyd"])
def test_no_input_row_in_json_csv_or_html(fitted, key):
    X, out = fitted
    _, rel = out[key]
    assert R.find_input_rows(rel, X).size == 0
    docs = texts(rel)
    assert len(vectors_in("json", docs["json"], ["x", "y"])) >= 3      # the centres are read back...
    assert len(vectors_in("csv", docs["csv"], ["x", "y"])) >= 3
    assert len(vectors_in("html", docs["html"], ["x", "y"])) >= 3
    for name, text in docs.items():                                    # ...and none is an input row
        assert rows_found(name, text, X) == [], f"an input row is in the {name} release"
    # No dataset size or utility figure computed on the raw data either.
    body = docs["json"]
    for word in ("nicv", "inertia", "n_clipped", "n_samples_seen", "fingerprint"):
        assert word not in body.lower()
    assert str(len(X)) not in json.dumps(rel["privacy"])


def test_the_row_check_can_fail(fitted):
    X, out = fitted
    _, rel = out["dplloyd"]
    leaky = json.loads(R.to_json(rel))
    leaky["centroids"].append(X[17].tolist())
    assert R.find_input_rows(leaky, X).tolist() == [17]
    for name, text in texts(leaky).items():
        assert 17 in rows_found(name, text, X), name


def test_refuses_non_private_and_data_bounds(blobs):
    X, bounds, _ = blobs
    base = dpcore.ALGORITHMS["kmeans"](n_clusters=3, epsilon=None, random_state=0).fit(X)
    with pytest.raises(ValueError, match="not private"):
        R.build_release(base, algorithm="kmeans")
    with pytest.warns(dpcore.PrivacyLeakWarning):
        leaky = dpcore.ALGORITHMS["dplloyd"](n_clusters=3, epsilon=1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="bounds were read from the data"):
        R.build_release(leaky, algorithm="dplloyd")
    with pytest.raises(RuntimeError, match="not fitted"):
        R.build_release(dpcore.ALGORITHMS["dplloyd"](n_clusters=3), algorithm="dplloyd")


@pytest.mark.parametrize("key", ["eugkm", "dplloyd"])
def test_private_release_exports_no_seed(fitted, key):
    """Nothing in a default release lets anyone regenerate its noise: no seed in any export."""
    _, out = fitted
    est, rel = out[key]
    assert est.simulation_ is False and est.random_state is None
    for name, text in texts(rel).items():
        assert "random_state" not in text, name
        assert "NOT PRIVATE" not in text, name
    # Floating-point safety is visible in the export: counts are integers, other values lie on the lattice.
    for e in rel["ledger"]:
        if e["granularity"] is not None:
            assert math.frexp(e["granularity"])[0] == 0.5
    if key == "eugkm":
        counts = np.asarray(rel["synopsis"]["counts"])
        assert np.array_equal(counts, np.rint(counts))


def test_seeded_fit_is_refused_unless_simulation(blobs):
    X, bounds, _ = blobs
    with pytest.warns(dpcore.SeededNoiseWarning, match="simulation, not a private release"):
        est = dpcore.ALGORITHMS["eugkm"](n_clusters=3, epsilon=0.7, bounds=bounds, random_state=3).fit(X)
    assert est.simulation_ is True
    with pytest.raises(ValueError, match="simulation=True"):
        R.build_release(est, algorithm="eugkm")
    rel = R.build_release(est, algorithm="eugkm", simulation=True)
    assert rel["privacy"]["private"] is False
    assert rel["privacy"]["guarantee"].startswith("NOT PRIVATE") and "reproducible from the seed" in \
        rel["privacy"]["guarantee"]
    assert rel["seed_policy"]["random_state"] == 3
    for name, text in texts(rel).items():
        assert "NOT PRIVATE" in text, name


def test_session_budget_is_the_stores_memory_mode(fitted):
    """The old per-session account is a deprecated alias of ReleaseStore(":memory:"): same sums and refusals."""
    _, out = fitted
    rel = out["eugkm"][1]
    eps = rel["privacy"]["epsilon_spent"]
    with pytest.warns(DeprecationWarning, match="ReleaseStore"):
        acc = SessionBudget()
    assert isinstance(acc, ReleaseStore) and acc.memory
    acc.set_cap("taxi", 1.0)
    rid = acc.charge_release("taxi", rel)
    assert [r.id for r in acc.releases("taxi")] == [rid] and acc.spent("taxi")[0] == pytest.approx(eps)
    assert not acc.can_afford("taxi", 1.0 - eps + 0.01) and acc.can_afford("taxi", 1.0 - eps)
    with pytest.raises(BudgetExceededError, match="choose a smaller ε or raise the total"):
        acc.charge_release("taxi", rel)
    with pytest.raises(ValueError, match="already spent"):
        acc.set_cap("taxi", 0.1)
    assert acc.spent("other") == (0.0, 0.0) and acc.cap("other") is None  # accounts are per dataset
    acc.close()


def test_explain_numbers():
    for eps in (0.1, 1.0, 5.0):
        st = {s.title: s for s in epsilon_statements(eps)}
        assert fmt_odds(eps) in st["Odds ratio"].value
        adv = (math.exp(eps) - 1) / (math.exp(eps) + 1)
        assert attacker_advantage_bound(eps) == pytest.approx(adv)
        assert fmt_share(adv) in st["Attacker's advantage"].value
        assert posterior_bound(eps, 0.5) == pytest.approx(math.exp(eps) / (1 + math.exp(eps)))
        assert "δ = 0" in st["What δ adds"].value
    assert fmt_delta(1e-6) in epsilon_statements(1.0, 1e-6)[-1].value
    rows = levels_table()
    assert [r["name"] for r in rows][0] == "odds ≤ 1.01×" and rows[-1]["odds_ratio"] > 1e4
    assert all(a["advantage"] < b["advantage"] for a, b in zip(rows, rows[1:]))
    with pytest.raises(ValueError):
        epsilon_statements(0.0)
    with pytest.raises(ValueError):
        epsilon_statements(1.0, 1.5)


# -- the published schema (dpcore-release/2) ------------------------------------------------------
PRIVATE_KEYS = sorted(k for k, c in dpcore.ALGORITHMS.items() if c.private)


@pytest.mark.parametrize("key", PRIVATE_KEYS)
@pytest.mark.parametrize("epsilon", [0.5, 1000.0])
def test_every_export_validates_against_the_schema(key, epsilon, blobs):
    """Every private registry estimator's export, JSON round trip included, follows the schema (ε = 1000 too)."""
    jsonschema = pytest.importorskip("jsonschema")
    X, bounds, _ = blobs
    cls = dpcore.ALGORITHMS[key]
    kw = {"epsilon": epsilon, "bounds": bounds}
    if cls.needs_delta:
        kw["delta"] = 1e-6
    if "n_clusters" in cls().get_params():
        kw["n_clusters"] = 3
    try:
        est = cls(**kw).fit(X)
    except dpcore.InfeasibleBudgetError:
        pytest.skip(f"{key} is infeasible on 6,000 points at epsilon={epsilon} (refused up front, by design)")
    rel = json.loads(R.to_json(R.build_release(est, algorithm=key, dataset="blobs", columns=["x", "y"])))
    R.validate_release(rel)
    assert rel["format"] == "dpcore-release/2"
    approx = rel["privacy"]["delta"] > 0
    assert rel["privacy"]["measure"]["opendp"] == ("Approximate(MaxDivergence)" if approx else "MaxDivergence")
    assert "random_state" not in json.dumps(rel)
    assert rel["environment"]["numpy"] == np.__version__
    # Each additive-noise step states its scale; a Laplace scale is sensitivity / epsilon.
    for row in rel["ledger"]:
        if "laplace" in row["mechanism"]:
            assert row["noise_scale"] == pytest.approx(row["sensitivity"] / row["epsilon"])
    bad = dict(rel, format="dpcore-release/2", ledger=[{"name": "x"}])
    with pytest.raises(jsonschema.ValidationError):
        R.validate_release(bad)


def test_schema_refuses_a_seed_in_a_private_release(fitted):
    jsonschema = pytest.importorskip("jsonschema")
    _, out = fitted
    rel = json.loads(R.to_json(out["eugkm"][1]))
    rel["seed_policy"]["random_state"] = 0
    with pytest.raises(jsonschema.ValidationError):
        R.validate_release(rel)


def test_the_report_shows_image_centres_as_images():
    """Issue 31: high-dimensional image data (8 x 8 digits) is shown as centre images in the HTML report,
    not as a scatter of its first two pixels; each image decodes to the centre it shows."""
    import base64
    from io import BytesIO

    from PIL import Image
    from sklearn.datasets import load_digits
    X = load_digits().data
    est = dpcore.ALGORITHMS["zcdp_lloyd"](n_clusters=4, epsilon=2.0, delta=1e-6, bounds=(0.0, 16.0)).fit(X)
    rel = R.build_release(est, algorithm="zcdp_lloyd", dataset="digits", columns=[f"p{j}" for j in range(64)])
    html = R.to_html(rel)
    pngs = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(pngs) == 4 and "<svg" not in html and "<script" not in html.lower()
    for b64, c in zip(pngs, est.cluster_centers_):
        img = np.asarray(Image.open(BytesIO(base64.b64decode(b64))))[::3, ::3]   # undo the 3x enlargement
        expected = (255 * (1 - np.clip(c / 16.0, 0, 1))).astype(np.uint8).reshape(8, 8)
        np.testing.assert_array_equal(img, expected)
    two_d = R.to_html(R.build_release(dpcore.ALGORITHMS["eugkm"](n_clusters=3, epsilon=1.0, bounds=(0.0, 16.0))
                                      .fit(X[:, :2]), algorithm="eugkm", dataset="two", columns=["a", "b"]))
    assert "<svg" in two_d and "data:image/png" not in two_d


def test_csv_has_the_centres_first_and_a_header_per_section(fitted):
    """Issue 65: the centres opened the CSV only after 45 rows of details (and 17,689 cells on the taxi map)."""
    _, out = fitted
    _, rel = out["eugkm"]
    rows = list(csv.DictReader(io.StringIO(R.to_csv(rel))))
    k, d = len(rel["centroids"]), len(rel["dataset"]["columns"])
    assert rows[0]["section"] == "centroid" and rows[0]["item"] == rows[0]["field"] == ""
    assert "Private centres" in rows[0]["value"]
    assert [r["section"] for r in rows[1:1 + k * d]] == ["centroid"] * (k * d)
    sections = [r["section"] for r in rows]
    firsts = [s for i, s in enumerate(sections) if i == 0 or sections[i - 1] != s]
    assert firsts[:8] == ["centroid", "meta", "algorithm", "parameter", "privacy", "seed_policy", "bounds", "ledger"]
    assert sections.index("synopsis_cell") > sections.index("ledger")     # thousands of cells come last
    headers = [r for r in rows if r["item"] == r["field"] == ""]
    assert {r["section"] for r in headers} == set(firsts) - {"synopsis_edges", "synopsis_cell"}


def test_no_python_none_in_the_html_report(fitted):
    _, out = fitted
    _, rel = out["eugkm"]
    assert rel["parameters"]["max_contributions"] is None                # a parameter left unset ...
    html = R.to_html(rel)
    assert "None" not in html and "<td>max_contributions</td><td>not set</td>" in html   # ... said in words

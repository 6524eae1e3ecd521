"""AppTest for the Compare, Explain and Release pages (small embedded data: s1_like)."""
import base64
import json
import math
from pathlib import Path

import numpy as np
import pytest
from app_walk import upload_in_apptest
from streamlit.testing.v1 import AppTest

from dpcore import datasets
from dpcore.explain import NOT_PRIVATE, attacker_advantage_bound, posterior_bound
from dpcore.formatting import fmt_delta, fmt_epsilon, fmt_odds, fmt_share
from dpcore.store import ReleaseStore
from ui.models import explain as XM
from ui.models.shared import Totals, draw_cost
from ui.not_private import RAW_FACTS_KEY

# On data that is not public a page asks before it draws (issue 24); these tests press "Draw".
pytestmark = pytest.mark.usefixtures("auto_draw")

PAGES = Path(__file__).resolve().parents[1] / "pages"


def run(at):
    at.run(timeout=300)
    assert not at.exception, [e.value for e in at.exception]
    return at


#: The Release page's downloads of a release: JSON, CSV, the report, the script and the notebook (issue 67).
DOWNLOADS = {"dl_json", "dl_csv", "dl_html", "dl_py", "dl_ipynb"}


def page(name, **params):
    at = AppTest.from_file(str(PAGES / name), default_timeout=300)
    at.query_params["dataset"] = "s1_like"
    for k, v in params.items():
        at.query_params[k] = v
    return run(at)


def arr(v):
    """A plotly JSON array (plain list or numpy's base64 ``bdata``) as a numpy array."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v, dtype=float)


def texts(at):
    return [c.value for c in at.caption] + [m.value for m in at.markdown] + [w.value for w in at.warning]


# -- Explain ------------------------------------------------------------------------------------
def test_explain_gives_numbers_for_the_chosen_epsilon():
    at = page("7_Explain.py", epsilon="2")
    m = {x.label: x.value for x in at.metric}
    # Short figures a metric shows whole (issue 56: "at most 62.2% (fro…"), their context in the label.
    # The bounds of dpcore.explain, written by the one formatter (issue 65: the test names the figures, not text).
    assert m["Odds ratio"] == f"≤ {fmt_odds(2)}"
    assert m["Attacker's advantage"] == f"≤ {fmt_share(attacker_advantage_bound(2))}"
    assert m[f"Belief after seeing the release (from {fmt_share(0.5)})"] == f"≤ {fmt_share(posterior_bound(2))}"
    assert any("pure ε-DP" in t for t in texts(at))
    assert len(at.table) == 1 and "10" in at.table[0].value.index.astype(str)   # each ε of the slider in numbers
    # The glossary in text that wraps (a table cut every definition): each term with its whole definition.
    from dpcore.glossary import GLOSSARY
    for term in ("NICV", "θ (theta)", "zCDP", "DCOM", "δ (delta)"):
        assert any(f"**{term}**: {GLOSSARY[term]}" in t for t in texts(at)), term
    assert any(NOT_PRIVATE in t for t in texts(at))
    at.select_slider(key="delta").set_value(1e-6)
    run(at)
    assert any(f"δ = {fmt_delta(1e-6)}" in t for t in texts(at))
    at.select_slider(key="epsilon").set_value(10.0)
    run(at)
    assert at.query_params["epsilon"] == "10.0"
    # no unsourced level name: the odds bound, and real deployments with their units beside it
    assert any("22,026×" in i.value and "U.S. Census Bureau" in i.value and "per person" in i.value for i in at.info)
    # The releases' sum (a fragment of its own): 4 releases at ε = 10 compose to ε = 40.
    at.number_input(key="n_releases").set_value(4)
    run(at)
    assert XM.several_releases(10.0, 4) in texts(at)


# -- Compare ------------------------------------------------------------------------------------
UPLOAD = "upload:s1.csv"
PANELS = (0.05, 0.5, 1.0, 5.0)      # the page's default panels at ε = 1 (the curve's grid and ε)


def private_compare(name="6_Compare.py", **params):
    """A page on private data (Compare by default): the rows of s1_like, moved by one unit (the same rows would
    share s1_like's account), uploaded as a file (an upload is never public)."""
    X = datasets.load("s1_like").X + 1
    data = ("x,y\n" + "\n".join(f"{a:g},{b:g}" for a, b in X) + "\n").encode()
    at = page(name, **params)
    at = upload_in_apptest(at, data, "s1.csv", columns=["x", "y"], bounds="0, 1000000\n0, 1000000")
    if "k" in params:       # another data set brings its own k (a guess for an upload): the test's k again
        at.number_input(key="k").set_value(int(params["k"]))
    return run(at)          # AppTest.run: a page that draws on a press gets it (auto_draw)


def test_compare_on_public_data_shows_every_panel_at_once_as_a_free_preview():
    """Issue 65, point 7: on public data the panels are previews, at once, recorded nowhere."""
    at = page("6_Compare.py", algorithm="dplloyd", k="15")
    assert not any(b.key == "draw_panels" for b in at.button)
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    titles = [a["text"] for a in fig["layout"]["annotations"] if a["text"].startswith("<b>ε")]
    assert len(titles) == 4 and all("preview" in t and "NICV" in t for t in titles) and any("chosen" in t for t in titles)
    assert any(i.value.startswith("**Previews, not releases.**") for i in at.info)
    assert not any("itself a use of the data" in w.value for w in at.warning)
    assert ReleaseStore().releases() == []


def test_compare_small_multiples_are_independent_recorded_draws_with_their_summed_cost():
    at = private_compare(algorithm="dplloyd", k="15")
    assert at.query_params["algorithm"] == "dplloyd" and at.query_params["k"] == "15"
    assert "seed" not in at.query_params
    # Nothing drawn before the person agrees to the stated cost, said in one sentence and on the button.
    assert ReleaseStore().spent(UPLOAD) == (0.0, 0.0)
    need = sum(draw_cost("dplloyd", dict(epsilon=e, n_clusters=15), 2).epsilon for e in PANELS)
    assert at.button(key="draw_panels").label == f"Draw 4 panels: spends ε = {fmt_epsilon(need)}"
    assert any(f"spends ε = {fmt_epsilon(need)}" in i.value and "sequential composition" in i.value for i in at.info)
    at.button(key="draw_panels").click()
    run(at)
    charts = at.get("plotly_chart")
    assert len(charts) >= 1                             # the small multiples (the advisor is in the raw-facts panel)
    fig = json.loads(charts[0].proto.spec)
    titles = [a["text"] for a in fig["layout"]["annotations"] if a["text"].startswith("<b>ε")]
    assert len(titles) == 4 and all("release #" in t and "NICV" in t for t in titles)
    assert any("chosen" in t for t in titles)
    assert any(NOT_PRIVATE in t for t in texts(at))
    assert any("itself a use of the data" in w.value for w in at.warning)
    rec = ReleaseStore().releases(UPLOAD)
    assert sorted(r.release["privacy"]["epsilon"] for r in rec) == list(PANELS)
    assert all(r.who.endswith("(local mode) · Compare") and "random_state" not in r.release["seed_policy"] for r in rec)
    run(at)                                             # kept: a rerun draws and spends nothing
    assert ReleaseStore().spent(UPLOAD)[0] == pytest.approx(need)
    assert at.button(key="redraw_panels").label == f"New draws of these 4 panels (fresh noise: spends ε = " \
                                                   f"{fmt_epsilon(need)} again)"
    at.multiselect(key="multiples").set_value([0.1, 1.0])
    run(at)
    assert any("between 3 and 6" in i.value for i in at.info)


def test_compare_panels_over_the_total_draw_what_fits_and_name_the_rest():
    """Issue 31: under a total, the panels that fit are drawn in the order shown; the others are named."""
    at = private_compare(algorithm="dplloyd", k="15")
    ReleaseStore().set_cap(UPLOAD, 2.0, 0.0)              # 4 panels need 6.55; 0.05 + 0.5 + 1 fit
    run(at)
    assert ReleaseStore().releases(UPLOAD) == []          # nothing before the click
    assert any("1 panel(s) cannot be drawn: ε = 5 (ε = 5 together)" in w.value for w in at.warning)
    assert at.button(key="draw_panels").label == f"Draw 3 panels: spends ε = {fmt_epsilon(1.55)}"
    at.button(key="draw_panels").click()
    run(at)
    assert not at.error
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [a["text"] for f in specs for a in f["layout"].get("annotations", []) if "NICV" in a["text"]]
    assert len(titles) == 3 and not any("ε = 5<" in t for t in titles)
    assert sorted(r.epsilon for r in ReleaseStore().releases(UPLOAD)) == [0.05, 0.5, 1.0]
    assert any("cannot be drawn: ε = 5" in w.value for w in at.warning)   # still named, with its cost
    assert not any(b.key == "draw_panels" for b in at.button)             # nothing more fits


def test_compare_reuses_the_explorers_draw_at_the_chosen_epsilon():
    private_compare("1_Explorer.py", algorithm="dplloyd", k="15")     # its Draw pressed (auto_draw)
    explorer = ReleaseStore().releases(UPLOAD)
    assert explorer and all(r.who.endswith("· Explorer") for r in explorer)
    at = private_compare(algorithm="dplloyd", k="15")
    # The ε = 1 panel is the Explorer's kept draw (found in the store by a new session): only three are new.
    assert at.button(key="draw_panels").label == f"Draw 3 panels: spends ε = {fmt_epsilon(5.55)}"
    at.button(key="draw_panels").click()
    run(at)
    compare = [r for r in ReleaseStore().releases(UPLOAD) if r.who.endswith("· Compare")]
    assert sorted(r.epsilon for r in compare) == [0.05, 0.5, 5.0]


def test_compare_curve_with_band_and_advisor():
    at = page("6_Compare.py", algorithm="dplloyd", k="15", curve="1")
    at.multiselect(key="curve_eps").set_value([0.1, 2.0])
    at.session_state[RAW_FACTS_KEY] = True       # the advisor is in the raw-facts panel: opened
    run(at)
    assert at.toggle(key="curve").value
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    curve = next(f for f in figs if f["layout"]["xaxis"].get("type") == "log"
                 and any("median" in (t.get("name") or "") for t in f["data"]))
    med = next(t for t in curve["data"] if "median" in t["name"])
    band = next(t for t in curve["data"] if "10–90" in t["name"])
    assert arr(med["x"]).tolist() == [0.1, 2.0] and arr(band["x"]).size == 4
    y = arr(med["y"])
    lo, hi = arr(band["y"])[2:][::-1], arr(band["y"])[:2]           # band: q90 forward, q10 back
    assert np.all(lo <= y) and np.all(y <= hi) and np.all(hi > lo)
    assert y[1] < y[0] and y[0] > 1                    # more budget, closer to non-private
    assert any("over 20 releases per ε, each with fresh unpredictable noise" in c.value for c in at.caption)
    assert any(m.label.startswith("Predicted best") for m in at.metric)
    assert at.query_params["curve"] == "1"
    assert ReleaseStore().releases() == []             # the curve is a utility figure, never a release
    # A second session asking for the same curve gets the server's finished one (its medians are the same
    # random draws), without the cache-replay error the progress bar used to cause (issue 31).
    second = page("6_Compare.py", algorithm="dplloyd", k="15", curve="1")
    second.multiselect(key="curve_eps").set_value([0.1, 2.0])
    run(second)
    figs2 = [json.loads(c.proto.spec) for c in second.get("plotly_chart")]
    curve2 = next(f for f in figs2 if f["layout"]["xaxis"].get("type") == "log"
                  and any("median" in (t.get("name") or "") for t in f["data"]))
    np.testing.assert_array_equal(arr(next(t for t in curve2["data"] if "median" in t["name"])["y"]), y)
    # Its raw-facts panel is closed: the advisor is neither computed nor drawn (issue 66), the panel is there.
    assert not any(m.label.startswith("Predicted best") for m in second.metric) and len(figs2) == len(figs) - 1
    # Stop: switches the curve off and says so (the button is gone once the curve is done, so press it
    # through its callback's effect on the next run, as a click during the computation would).
    at.session_state["curve"] = False
    at.session_state["curve_stopped"] = True
    run(at)
    assert not at.toggle(key="curve").value and any("Stopped" in i.value for i in at.info)


# -- Release ------------------------------------------------------------------------------------
def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def set_total(at, eps):
    at.number_input(key="cap_eps").set_value(eps)
    at.button(key="FormSubmitter:cap_form-Set the total").click()
    return run(at)


def test_release_downloads_are_the_recorded_release_with_its_ledger_and_no_input_row(captured):
    at = page("8_Release.py", algorithm="eugkm", k="15", epsilon="0.5")
    assert any("itself a use of the data" in w.value or "adds up" in w.value for w in at.warning)
    rec = ReleaseStore().releases("s1_like")
    assert len(rec) == 1 and rec[0].who.endswith(" · Release page")     # recorded before the page showed it
    assert [b.key for b in at.get("download_button")] == ["dl_json", "dl_csv", "dl_html", "dl_py", "dl_ipynb"]
    assert metric(at, "ε spent so far") == "0.5"
    js = next(v for k, v in captured.items() if k.endswith(".json"))
    rel = json.loads(js)
    assert rel == rec[0].release                               # the download is exactly what the store holds
    assert rel["privacy"]["epsilon"] == 0.5 and "random_state" not in rel["seed_policy"]
    assert rel["ledger"] and math.fsum(e["epsilon"] for e in rel["ledger"]) == pytest.approx(0.5)
    assert rel["synopsis"]["kind"] == "grid" and len(rel["centroids"]) == 15
    X = datasets.load("s1_like").X
    released = np.array(rel["centroids"])
    assert not any(np.any(np.all(released == x, axis=1)) for x in X)
    csv_text = next(v for k, v in captured.items() if k.endswith(".csv"))
    html = next(v for k, v in captured.items() if k.endswith(".html"))
    csv_text = csv_text.decode() if isinstance(csv_text, bytes) else csv_text
    html = html.decode() if isinstance(html, bytes) else html
    for x in X[:: 25]:  # integer-valued data: any row written as "x,y" or in table cells would show here
        a, b = f"{x[0]:.6g}", f"{x[1]:.6g}"
        assert f"{a},{b}" not in csv_text.replace(".0,", ",")
        assert f"<td>{a}</td><td>{b}</td>" not in html
    assert "grid cell counts" in html and "grid cell counts" in csv_text
    # risk as a running total (issue 31): the report and the sidebar state the data's total, not one release's ε
    assert "All releases of this data together" in html and "so far on this data: <b>0.5</b>" in html
    assert any(m.value.startswith(f"**{totals_of('s1_like').words()}**") for m in at.sidebar.markdown)
    history = next(d.value for d in at.dataframe if "release" in d.value.columns)
    assert history["release"].tolist() == [rec[0].id] and history["ε"].tolist() == [fmt_epsilon(0.5)]
    assert "None" not in history.to_string()


def test_a_total_below_what_is_spent_is_refused_with_a_sentence():
    at = page("8_Release.py", algorithm="dplloyd", k="15", epsilon="1.0")
    set_total(at, 0.5)
    assert any(e.value.startswith("That total cannot be set:") and "already" in e.value for e in at.error)
    assert ReleaseStore().cap("s1_like") is None
    set_total(at, 1.5)
    assert not at.error and ReleaseStore().cap("s1_like")[0] == 1.5
    assert metric(at, "ε left") == "0.5"


def totals_of(name: str) -> Totals:
    from ui.models.shared import totals
    return totals(ReleaseStore(), name, title=datasets.load(name).title)


def test_a_new_draw_that_cannot_fit_says_so_before_it_is_pressed_and_a_refusal_keeps_the_last_draw(captured):
    """Issue 65, point 8: the button said "spends ε = 1 again" with 0.04 left, and after its refusal the release and
    its downloads were gone until the page was left."""
    at = page("8_Release.py", algorithm="dplloyd", k="15", epsilon="1.0")
    (first,) = ReleaseStore().releases("s1_like")
    set_total(at, 1.0)                                  # the first draw spent all of it
    again = at.button(key="new_draw")
    assert getattr(again.proto, "disabled", False)      # said before any press
    said = [c.value for c in at.caption if c.value.startswith("Cannot be drawn now:")]
    assert said and totals_of("s1_like").why_not(draw_cost("dplloyd", dict(epsilon=1.0, n_clusters=15), 2),
                                                    what="A new draw") in said[0]
    assert {b.key for b in at.get("download_button")} >= DOWNLOADS          # the release stays, with its downloads
    # Meanwhile (another tab) the total was raised, then lowered again after this page was drawn: the press is
    # refused by the check before any fit, and the last draw stays on screen with its downloads.
    set_total(at, 2.0)                                  # room for one more draw at ε = 1
    assert not getattr(at.button(key="new_draw").proto, "disabled", False)
    ReleaseStore().set_cap("s1_like", 1.0, 1e-6, who="another tab")
    files_before = set(captured)
    at.button(key="new_draw").click()
    run(at)
    assert [e.value for e in at.error] and all(e.value.startswith("Refused, to protect privacy") for e in at.error)
    assert {b.key for b in at.get("download_button")} >= DOWNLOADS and set(captured) == files_before  # same files, no draw
    assert any(f"release #{first.id} in the release store" in c.value for c in at.caption)
    assert any("Privacy budget of this draw" in m.value for m in at.markdown)
    assert ReleaseStore().releases("s1_like") == [first] and metric(at, "ε spent so far") == fmt_epsilon(1.0)
    # the changes of the total say who set each one, as a person reads it (no "· Release page")
    changes = next(d.value for d in at.dataframe if "set by" in d.value.columns)
    assert "(local mode)" in changes["set by"].iloc[0] and "·" not in changes["set by"].iloc[0]


def test_the_account_survives_a_reload_and_refuses_over_the_total():
    at = page("8_Release.py", algorithm="dplloyd", k="15", epsilon="1.0")
    set_total(at, 1.5)
    again = page("8_Release.py", algorithm="dplloyd", k="15", epsilon="1.0")   # a reload: same draw, same account
    assert metric(again, "ε spent so far") == fmt_epsilon(1.0) and metric(again, "ε left") == fmt_epsilon(0.5)
    assert any("release #1 in the release store" in c.value for c in again.caption)
    again.select_slider(key="epsilon").set_value(2.0)   # 1 + 2 > 1.5: the Draw button says so, disabled
    run(again)
    draw = again.button(key="draw_Release page")
    assert getattr(draw.proto, "disabled", False) and draw.label == f"Draw: spends ε = {fmt_epsilon(2.0)}"
    assert any(c.value.startswith("Cannot be drawn now:") for c in again.caption)
    assert len(ReleaseStore().releases("s1_like")) == 1
    again.select_slider(key="epsilon").set_value(0.5)   # fits under the total: drawn and recorded
    run(again)
    assert not again.error and metric(again, "ε spent so far") == fmt_epsilon(1.5)
    assert [r.epsilon for r in ReleaseStore().releases("s1_like")] == [1.0, 0.5]


def test_sidebar_advisor_ranks_from_public_inputs_and_names_its_pick():
    """The advisor beside the picker (issue 25): the ranking with the trivial line, the first pick in words,
    from the published size of the embedded public set."""
    from dpcore import evaluation as E
    from ui.advice import pick_text
    at = page("1_Explorer.py", algorithm="dplloyd", k="15", epsilon="1.0")
    # Computed when opened (issue 56, speed): nothing in the box before.
    assert not next(e for e in at.sidebar.expander if e.label.startswith("Advisor")).markdown
    at.session_state["advisor_open"] = True
    run(at)
    box = next(e for e in at.sidebar.expander if e.label.startswith("Advisor"))
    table = "\n".join(m.value for m in box.markdown)
    assert "| algorithm | × non-private (range) |" in table and "DP mean (trivial)" in table
    ds = datasets.load("s1_like")
    adv = E.advise(ds.X.shape[0], ds.X.shape[1], 15, 1.0, delta=1e-6)
    caption = " ".join(c.value for c in box.caption)
    assert f"about {ds.X.shape[0]:,} rows (the published size of this public data set)" in caption
    assert pick_text(adv) in caption


def test_the_pick_in_words_gives_each_auto_candidates_own_share():
    """6-d, 24 clusters, eps 2: auto runs DPM and zCDP-Lloyd on unequal shares (DPM 3/4); the words say
    which gets what."""
    from dpcore import evaluation as E
    from ui.advice import pick_text, short_name
    adv = E.advise(60_000, 6, 24, 2.0, delta=1e-6)
    assert adv.best == "auto" and len(set(adv.plan.budgets())) == 2
    text = pick_text(adv)
    for key, e in zip(adv.plan.keys, adv.plan.budgets()):
        assert f"{short_name(key)} at ε = {e:.3g}" in text
    assert "each" not in text


def test_explain_page_says_what_the_advisor_reads_and_auto_spends():
    from dpcore import evaluation as E
    at = page("7_Explain.py")
    text = " ".join(m.value for m in at.markdown)
    assert XM.advisor_markdown(E.auto_separation_share()) in text and XM.NOT_PRIVATE_TEXT in text

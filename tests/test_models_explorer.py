"""The Explorer's model (issue 65): what the page shows around its release, from the working set alone."""
from dpcore.explain import NOT_PRIVATE
from ui.models import explorer as M
from ui.models.shared import NO_BOUNDS, WorkingSet

WS = WorkingSet("nyc_taxi_sample", "NYC taxi 2009–15 (built in)", ("longitude", "latitude"), geo=True, public=True,
                algorithm="eugkm", k=5, epsilon=1.0, unit="trip", sees_raw=True)


def test_the_headline_names_the_data_by_its_title():
    m = M.explorer_model(WS, cells=M.NOISY, synopsis=True, sizes=True, baseline=True, nicv=(0.012, 0.01))
    assert m.headline == "**NYC taxi 2009–15 (built in)** · 2 columns: longitude, latitude"
    assert "nyc_taxi_sample" not in m.headline and m.warning is None
    assert m.stem == "eugkm_eps1"


def test_the_map_caption_says_what_each_layer_is_and_what_hovering_shows():
    m = M.explorer_model(WS, cells=M.NOISY, synopsis=True, sizes=True, baseline=True, nicv=None)
    assert "noisy grid synopsis" in m.map_caption and "noisy size" in m.map_caption and NOT_PRIVATE in m.map_caption
    assert m.legend == "noisy count per cell" and m.signed
    bare = M.explorer_model(WS, cells=None, synopsis=False, sizes=False, baseline=False, nicv=None)
    assert bare.legend is None and "noisy" not in bare.map_caption and "cell" not in bare.map_caption


def test_raw_figures_only_for_who_may_see_them():
    m = M.explorer_model(WS, cells=None, synopsis=False, sizes=False, baseline=True, nicv=(0.012, 0.010))
    assert [x.label for x in m.utility] == ["NICV, private", "NICV, non-private"]
    assert m.utility[0].delta == "+20.0% vs non-private" and NOT_PRIVATE in m.utility_caption
    analyst = WorkingSet(**{**WS.__dict__, "sees_raw": False, "public": False})
    m = M.explorer_model(analyst, cells=None, synopsis=False, sizes=False, baseline=True, nicv=(0.012, 0.010))
    assert m.utility == () and NOT_PRIVATE not in m.map_caption


def test_data_without_bounds_gets_the_one_warning():
    m = M.explorer_model(WorkingSet("upload:x.csv", "x.csv (uploaded)", ("a", "b"), bounded=False), cells=None,
                         synopsis=False, sizes=False, baseline=False, nicv=None)
    assert m.warning == NO_BOUNDS

"""The WaveCluster page's model (issue 65, point 1): the grid settings computed are the ones the sliders show."""
from ui.models import wavecluster as WM
from ui.models.shared import WorkingSet


def test_another_data_set_brings_its_defaults_into_the_sliders():
    """Switching to the spirals: the result and the sliders both take its defaults (they showed 100 / 50)."""
    g = WM.grid_settings("spirals", last_dataset="nyc_taxi_sample", shown=(100, 50), url=(100, 50))
    assert (g.num_grid, g.density) == WM.grid_defaults("spirals")
    assert g.set_widgets and g.changed


def test_a_slider_move_keeps_the_other_slider_as_shown():
    """Moving the density one step keeps the grid the sliders show (it snapped back to 100)."""
    first = WM.grid_settings("spirals", last_dataset="nyc_taxi_sample", shown=(100, 50), url=None)
    moved = WM.grid_settings("spirals", last_dataset="spirals", shown=(first.num_grid, first.density + 1), url=None)
    assert (moved.num_grid, moved.density) == (first.num_grid, first.density + 1)
    assert not moved.set_widgets and not moved.changed


def test_a_direct_link_opens_at_its_settings_and_bad_values_fall_back():
    g = WM.grid_settings("spirals", last_dataset=None, shown=None, url=("56", "30"))
    assert (g.num_grid, g.density, g.set_widgets) == (56, 30, True)
    assert (WM.grid_settings("spirals", last_dataset=None, shown=None, url=("57", "30")).num_grid
            == WM.grid_defaults("spirals")[0])            # odd: not a slider value
    assert WM.grid_settings("iris", last_dataset=None, shown=None, url=None).num_grid == WM.PAPER_DEFAULT[0]


def test_the_captions_name_the_unit_and_both_fits_cost():
    ws = WorkingSet("spirals", "Three spirals", ("x", "y"), epsilon=0.5)
    text = WM.measures_caption(ws, "per row")
    assert "ε = 0.5 per row" in text and "ε = 1 per row" in text

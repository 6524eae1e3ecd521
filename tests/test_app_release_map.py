"""The Release page's map has its legend (issue 56: "legends on every map"): the cells' colour scale from the
released counts, and a key to what the marks are.  Before, the map of the release to be published had neither."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[1] / "app.py"


def test_the_release_pages_map_has_the_colour_scale_of_its_noisy_cells_and_a_key():
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params.update(dataset="nyc_taxi_sample", k="5", epsilon="1.0")
    at.run()
    at.switch_page("pages/8_Release.py").run()
    assert not at.get("html") or not any("per cell" in h.proto.body for h in at.get("html"))   # nothing drawn yet
    (draw,) = [b for b in at.button if str(b.key).startswith("draw_")]
    at = draw.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("deck_gl_json_chart")) == 1
    legends = [h.proto.body for h in at.get("html") if "noisy count per cell" in h.proto.body]
    assert len(legends) == 1, [h.proto.body[:80] for h in at.get("html")]
    assert any(c.value.startswith("● private centres") and "noisy grid synopsis" in c.value for c in at.caption)

"""The gallery's model (issue 65, point 9): titles not keys, people not "root@vm (local mode) · publish", no None."""
import datetime as dt

from dpcore.formatting import fmt_epsilon
from ui.models import gallery as GM
from ui.models.shared import Totals

T = dt.datetime(2026, 1, 2, 10, 0, tzinfo=dt.timezone.utc)


def test_data_sets_are_listed_by_their_titles():
    t = GM.titles(["nyc_taxi_sample", "upload:checkins_private.csv", "b"],
                  {"nyc_taxi_sample": "NYC taxi 2009–15 (built in)", "b": None})
    assert t == {"nyc_taxi_sample": "NYC taxi 2009–15 (built in)",
                 "upload:checkins_private.csv": "checkins_private.csv (uploaded)", "b": "b"}
    assert GM.titles(["a", "c"], {"a": "Same", "c": "Same"})["c"] == "Same (c)"      # two titles never merge


def test_the_history_reads_in_the_one_rounding_without_none_and_with_a_person():
    rows = [{"id": 1, "time": T, "who": "root@vm (local mode) · Explorer", "algorithm": "eugkm", "epsilon": 0.9608,
             "delta": 0.0, "total_epsilon": 2.961, "total_delta": 0.0, "cap_epsilon": None, "cap_delta": None,
             "simulation": False}]
    (row,) = GM.history_rows(rows)
    assert list(row)[:4] == ["release", "ε", "ε so far", "total ε"]
    assert row["ε"] == fmt_epsilon(0.9608) and row["ε so far"] == fmt_epsilon(2.961) and row["total ε"] == "none"
    assert row["drawn by"] == "root on vm (local mode)" and row["page"] == "Explorer"
    assert "None" not in str(row)


def test_the_account_figures_and_the_release_line():
    f = GM.account_figures(Totals("d", "D", spent_epsilon=2.961), 1, 3)
    assert (f.spent, f.total) == (fmt_epsilon(2.961), "no total set") and "Of 3 draw(s)" in f.published_help
    rel = {"privacy": {"guarantee": "1-differential privacy", "level": "odds ≤ 2.72×"},
           "algorithm": {"reference": "Su et al. 2016"}}
    line = GM.release_line(rel, who="root@vm (local mode) · Explorer", created=T,
                           published_by="root@vm (local mode) · publish", published_at=T)
    assert "by root on vm (local mode) · source" in line and "publish ·" not in line and "@" not in line
    assert GM.release_label(12, "EUGkM", 0.96, T) == f"#12 · EUGkM · ε = {fmt_epsilon(0.96)} · 2026-01-02 10:00 UTC"
    assert "plain words" in GM.PLAIN

"""Upload defaults (issue 56): longitude/latitude by name and range, never an id column, a suggested person column."""
from __future__ import annotations

import pandas as pd

from dpcore.datasets import is_id_like, suggest_columns


def test_longitude_latitude_are_found_and_the_id_is_only_suggested_as_person():
    df = pd.DataFrame({"user_id": [1, 2, 3], "longitude": [-74.0, -73.9, -73.95], "latitude": [40.7, 40.8, 40.75]})
    assert suggest_columns(df) == {"columns": ["longitude", "latitude"], "geo": True, "person": "user_id"}


def test_a_longitude_name_out_of_range_is_not_a_map_and_ids_are_never_clustered():
    df = pd.DataFrame({"id": [1, 2], "lon": [500.0, 600.0], "lat": [1.0, 2.0], "size": [3.0, 4.0]})
    out = suggest_columns(df)
    assert out["geo"] is False and "id" not in out["columns"] and out["columns"] == ["lon", "lat"]
    assert out["person"] == "id"


def test_id_like_names():
    assert all(map(is_id_like, ["id", "user_id", "UserID", "customer", "trip_id", "device-id"]))
    assert not any(map(is_id_like, ["valid", "paid", "width", "latitude", "x", "ride", "width_id_ratio"]))

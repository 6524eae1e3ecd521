"""dpcore.datasets: registry, public bounds, uploads, the NYC taxi downloader."""
from __future__ import annotations

import filecmp
import gzip
import http.server
import io
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import datasets as D

REPO = Path(__file__).resolve().parents[1]
ALWAYS = ["nyc_taxi_sample", "s1_like", "spirals", "mnist_sample", "iris", "wine", "breast_cancer", "digits",
          "nyc_taxi_2015_01"]
GEO_FILES = ("nyc_taxi_", "gowalla_nyc_")


def _check_dataset(ds: D.Dataset, name: str) -> None:
    assert ds.name == name
    assert ds.X.dtype == np.float64 and ds.X.ndim == 2 and ds.X.shape[0] > 0
    assert np.isfinite(ds.X).all()
    assert len(ds.columns) == ds.X.shape[1]
    lo, hi = ds.bounds
    assert lo.shape == hi.shape == (ds.X.shape[1],)
    assert (lo < hi).all()
    assert ((ds.X >= lo) & (ds.X <= hi)).all(), f"{name}: points outside the public bounds"
    if ds.labels is not None:
        assert len(ds.labels) == ds.X.shape[0]
    assert ds.title and ds.description


# ------------------------------------------------------------------ registry and loaders
def test_available_always_and_no_files_without_env(monkeypatch):
    monkeypatch.delenv("DPCORE_DATA", raising=False)
    assert D.available() == ALWAYS


def test_available_reads_env_at_call_time(monkeypatch, shared_data, tmp_path):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    names = D.available()
    for n in ["nyc_taxi_2009-2015_bq_sample_pickups", "gowalla_nyc_locations", "franti_s1",
              "privwavecluster_spiral_30k", "adult", "mnist_784"]:
        assert n in names
    assert "franti_s1_centroids" not in names          # not a data set of points
    assert names[: len(ALWAYS)] == ALWAYS
    (tmp_path / "franti_s1.csv.gz").write_bytes((shared_data / "franti_s1.csv.gz").read_bytes())
    (tmp_path / "unknown_thing.csv.gz").write_bytes(b"")
    monkeypatch.setenv("DPCORE_DATA", str(tmp_path))
    assert D.available() == ALWAYS + ["franti_s1"]


@pytest.mark.parametrize("name", ["s1_like", "spirals", "mnist_sample", "iris", "wine", "breast_cancer", "digits"])
def test_builtin_sets_load_inside_bounds(name):
    ds = D.load(name)
    _check_dataset(ds, name)
    assert ds.geo is False
    assert ds.labels is not None and len(np.unique(ds.labels)) == ds.n_clusters_hint
    assert ds.n_dropped == 0


def test_sklearn_bounds_come_from_descr_not_data():
    from sklearn.datasets import load_wine
    ds = D.load("wine")
    # DESCR prints alcohol 11.0..14.8; the data reach 14.83: one unit of the last digit outward.
    assert ds.bounds[0][0] == pytest.approx(10.9) and ds.bounds[1][0] == pytest.approx(14.9)
    assert load_wine().data[:, 0].max() > 14.8
    digits = D.load("digits")
    assert (digits.bounds[0] == 0).all() and (digits.bounds[1] == 16).all()


def test_real_files_load(monkeypatch, shared_data):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    names = [n for n in D.available() if n not in ALWAYS]
    assert len(names) >= 30
    for name in names:
        ds = D.load(name, max_rows=3000)
        _check_dataset(ds, name)
        assert ds.X.shape[0] <= 3000
        assert ds.geo is name.startswith(GEO_FILES), name
        if ds.geo:
            assert ds.columns == ["longitude", "latitude"]
            assert ds.X.shape[1] == 2 and (ds.X[:, 0] < -73).all() and (ds.X[:, 1] > 40).all()
        info = D.info(name)
        assert info["geo"] is ds.geo and info["cached"] and not info["needs_download"]


def test_taxi_sample_box_filter(monkeypatch, shared_data):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    ds = D.load("nyc_taxi_2009-2015_bq_sample_pickups")
    lo, hi = D.TAXI_BOUNDS
    np.testing.assert_array_equal(ds.bounds[0], lo)
    np.testing.assert_array_equal(ds.bounds[1], hi)
    raw = pd.read_csv(shared_data / "nyc_taxi_2009-2015_bq_sample_pickups.csv.gz",
                      usecols=["pickup_longitude", "pickup_latitude"])
    assert 175_000 < ds.X.shape[0] < 190_000
    assert ds.X.shape[0] + ds.n_dropped == len(raw)
    assert str(ds.n_dropped) in ds.description.replace(",", "")
    # X is [longitude, latitude]: longitude is the negative one.
    assert (ds.X[:, 0] < 0).all() and (ds.X[:, 1] > 0).all()


def test_adult_and_mnist(monkeypatch, shared_data):
    monkeypatch.setenv("DPCORE_DATA", str(shared_data))
    adult = D.load("adult")
    assert adult.columns == ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    assert adult.X.shape == (48842, 6) and adult.n_clusters_hint == 5
    mn = D.load("mnist_784", max_rows=500)
    assert mn.X.shape == (500, 784) and mn.X.max() <= 255 and mn.X.dtype == np.float64
    assert (mn.bounds[1] == 255).all() and mn.labels.shape == (500,)


def test_max_rows_is_deterministic():
    a = D.load("s1_like", max_rows=700, random_state=3)
    b = D.load("s1_like", max_rows=700, random_state=3)
    c = D.load("s1_like", max_rows=700, random_state=4)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.X.shape == (700, 2) and not np.array_equal(a.X, c.X)
    full = D.load("s1_like")
    assert full.X.shape == (5000, 2)
    # the subsample is a subset of the rows, in file order
    rows = {tuple(r) for r in full.X.tolist()}
    assert all(tuple(r) in rows for r in a.X.tolist())


def test_unknown_name_lists_available():
    with pytest.raises(ValueError, match="unknown data set 'nope'.*s1_like.*iris"):
        D.load("nope")
    with pytest.raises(ValueError, match="s1_like"):
        D.info("nope")


def test_info_is_cheap_and_right():
    i = D.info("s1_like")
    assert set(i) >= {"title", "description", "geo", "needs_download", "cached"}
    assert i["geo"] is False and i["needs_download"] is False
    assert D.info("nyc_taxi_2015_01")["geo"] is True


def test_sample_script_regenerates_identical_files(tmp_path):
    subprocess.run([sys.executable, str(REPO / "sample_data" / "make_sample_data.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    for f in ["s1_like.csv", "spirals.csv"]:
        assert filecmp.cmp(tmp_path / f, REPO / "sample_data" / f, shallow=False), f
    total = sum((REPO / "sample_data" / f).stat().st_size for f in ["s1_like.csv", "spirals.csv"])
    assert total < 400 * 1024


def test_embedded_taxi_sample_is_the_real_data_losslessly(monkeypatch, shared_data):
    """nyc_taxi_sample loads without DPCORE_DATA, holds exactly the in-box pickups of the source
    (microdegrees are lossless), inside the public box, and its description's counts are the file's."""
    import pyarrow.parquet as pq
    monkeypatch.delenv("DPCORE_DATA", raising=False)
    ds = D.load("nyc_taxi_sample")
    _check_dataset(ds, "nyc_taxi_sample")
    assert ds.geo is True and ds.columns == ["longitude", "latitude"] and ds.n_clusters_hint == 5
    assert ds.bounds[0] is D.TAXI_BOUNDS[0] and ds.bounds[1] is D.TAXI_BOUNDS[1]   # the constant box
    assert not D.info("nyc_taxi_sample")["needs_download"]
    raw = pd.read_csv(shared_data / "nyc_taxi_2009-2015_bq_sample_pickups.csv.gz",
                      usecols=["pickup_longitude", "pickup_latitude"]).to_numpy()
    lo, hi = D.TAXI_BOUNDS
    with np.errstate(invalid="ignore"):
        inside = raw[np.isfinite(raw).all(axis=1) & ((raw >= lo) & (raw <= hi)).all(axis=1)]
    inside = inside[np.lexsort((inside[:, 1], inside[:, 0]))]
    np.testing.assert_array_equal(ds.X, inside)   # bit for bit: value / 1e6 is the CSV's decimal
    path = REPO / "sample_data" / "nyc_taxi_sample.parquet"
    meta = {k.decode(): v.decode() for k, v in pq.read_schema(path).metadata.items() if k.startswith(b"dpcore.")}
    counts = {k.split(".")[-1]: int(v) for k, v in meta.items() if k.startswith("dpcore.dropped.")}
    assert counts["kept"] == ds.n and counts["rows_in_source"] == len(raw)
    assert sum(v for k, v in counts.items() if k not in ("kept", "rows_in_source")) == len(raw) - ds.n
    text = ds.description.replace(",", "")
    for key in ("missing_coordinate", "gps_outlier_outside_nyc_region", "outside_public_box", "kept",
                "rows_in_source"):
        assert str(counts[key]) in text, key
    assert path.stat().st_size <= 2 * 2**20


def test_taxi_sample_script_regenerates_identical_file(shared_data, tmp_path):
    subprocess.run([sys.executable, str(REPO / "sample_data" / "make_taxi_sample.py"), "--out", str(tmp_path),
                    "--source", str(shared_data / "nyc_taxi_2009-2015_bq_sample_pickups.csv.gz")],
                   check=True, capture_output=True)
    assert filecmp.cmp(tmp_path / "nyc_taxi_sample.parquet", REPO / "sample_data" / "nyc_taxi_sample.parquet",
                       shallow=False)


# ------------------------------------------------------------------ uploads
def test_upload_good_csv_with_geo_detection():
    raw = b"id,lat,lng\n1,40.75,-73.99\n2,40.76,-73.98\n3,40.70,-74.00\n"
    df = D.read_table(io.BytesIO(raw), filename="pickups.csv")
    assert list(df.columns) == ["id", "lat", "lng"] and "note" not in df.attrs
    ds = D.dataset_from_frame(df, ["lat", "lng"], bounds=([40.7, -74.1], [40.9, -73.9]))
    assert ds.geo is True and ds.columns == ["lng", "lat"]       # reordered to lon, lat
    np.testing.assert_array_equal(ds.X[0], [-73.99, 40.75])
    np.testing.assert_array_equal(ds.bounds[0], [-74.1, 40.7])   # bounds reordered with them
    ds2 = D.dataset_from_frame(df, ["id", "lat"])
    assert ds2.geo is False and ds2.bounds is None and "No public bounds" in ds2.description


def test_upload_semicolon_and_decimal_comma(tmp_path):
    p = tmp_path / "eu.csv"
    p.write_text("x;y;name\n1,5;2,25;a\n3,0;4,75;b\n")
    df = D.read_table(p, filename="eu.csv")
    assert list(df.columns) == ["x", "y", "name"]
    np.testing.assert_allclose(df[["x", "y"]].to_numpy(), [[1.5, 2.25], [3.0, 4.75]])
    p2 = tmp_path / "tab.tsv"
    p2.write_text("a\tb\n1\t2\n3\t4\n")
    assert list(D.read_table(p2, filename="tab.tsv").columns) == ["a", "b"]
    p3 = tmp_path / "semi.csv"
    p3.write_text("a;b\n1.5;2\n3;4\n")
    np.testing.assert_allclose(D.read_table(p3, filename="semi.csv")["a"], [1.5, 3.0])


def test_upload_parquet():
    buf = io.BytesIO()
    pd.DataFrame({"longitude": [-73.9, -74.0], "latitude": [40.8, 40.75], "w": ["a", "b"]}).to_parquet(buf)
    buf.seek(0)
    df = D.read_table(buf, filename="pts.parquet")
    ds = D.dataset_from_frame(df, ["longitude", "latitude"])
    assert ds.geo is True and ds.X.shape == (2, 2)
    with pytest.raises(ValueError, match="parquet"):
        D.read_table(io.BytesIO(b"not parquet at all"), filename="x.parquet")


def test_upload_empty_and_header_only():
    with pytest.raises(ValueError, match="empty"):
        D.read_table(io.BytesIO(b""), filename="e.csv")
    with pytest.raises(ValueError, match="no data rows"):
        D.read_table(io.BytesIO(b"x,y\n"), filename="h.csv")


class _Upload(io.BytesIO):
    """Like Streamlit's UploadedFile: file-like with .size; counts bytes read."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.size = len(data)
        self.bytes_read = 0

    def read(self, n=-1):
        out = super().read(n)
        self.bytes_read += len(out)
        return out


def test_upload_too_large_refused_before_reading():
    up = _Upload(b"x,y\n" + b"1,2\n" * 1000)
    with pytest.raises(ValueError, match="more than the .* limit.*smaller"):
        D.read_table(up, filename="big.csv", max_bytes=1000)
    assert up.bytes_read == 0
    # a stream without .size is cut off at max_bytes + 1
    with pytest.raises(ValueError, match="limit"):
        D.read_table(io.BufferedReader(io.BytesIO(b"x,y\n" + b"1,2\n" * 1000)), filename="big.csv", max_bytes=1000)


def test_upload_cp1252_falls_back_with_note():
    raw = "città;x;y\nMünchen;1;2\nSão Paulo;3;4\n".encode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    df = D.read_table(io.BytesIO(raw), filename="w.csv")
    assert list(df.columns) == ["città", "x", "y"]
    assert df["città"].tolist() == ["München", "São Paulo"]
    assert "Windows-1252" in df.attrs["note"]
    ds = D.dataset_from_frame(df, ["x", "y"])
    assert "Windows-1252" in ds.description


def test_upload_bad_inputs():
    with pytest.raises(ValueError, match="not supported.*csv.*parquet"):
        D.read_table(io.BytesIO(b"x"), filename="data.xlsx")
    with pytest.raises(ValueError, match="no header row"):
        D.read_table(io.BytesIO(b"1.5,2\n3,4\n"), filename="n.csv")
    with pytest.raises(ValueError, match="no numeric columns"):
        D.read_table(io.BytesIO(b"a,b\nx,y\nz,w\n"), filename="t.csv")


def test_dataset_from_frame_errors_and_nan():
    df = pd.DataFrame({"x": [1.0, np.nan, 3.0, 4.0], "y": [1.0, 2.0, np.inf, 4.0], "name": list("abcd")})
    with pytest.raises(ValueError, match=r"'z'.*not found.*x, y, name"):
        D.dataset_from_frame(df, ["x", "z"])
    with pytest.raises(TypeError, match="'name'.*text"):
        D.dataset_from_frame(df, ["x", "name"])
    ds = D.dataset_from_frame(df, ["x", "y"], bounds=(0, 10))
    assert ds.X.shape == (2, 2) and ds.n_dropped == 2 and "2 rows with missing" in ds.description
    np.testing.assert_array_equal(ds.bounds[1], [10, 10])
    with pytest.raises(ValueError, match="no rows left"):
        D.dataset_from_frame(pd.DataFrame({"x": [np.nan], "y": [1.0]}), ["x", "y"])
    with pytest.raises(ValueError, match="inverted"):
        D.dataset_from_frame(df, ["x", "y"], bounds=(10, 0))
    with pytest.raises(ValueError, match="longitude/latitude"):
        D.dataset_from_frame(pd.DataFrame({"a": [500.0], "b": [1.0]}), ["a", "b"], geo=True)
    nogeo = D.dataset_from_frame(pd.DataFrame({"lon": [500.0], "lat": [1.0]}), ["lon", "lat"])
    assert nogeo.geo is False


# ------------------------------------------------------------------ downloader
class _SodaHandler(http.server.BaseHTTPRequestHandler):
    rows: list = []
    requests: list = []
    fail = False

    def do_GET(self):  # noqa: N802
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        type(self).requests.append(q)
        if type(self).fail:
            self.send_error(503, "Service Unavailable")
            return
        assert q["$select"] == ["pickup_longitude,pickup_latitude"] and q["$order"] == [":id"]
        off, lim = int(q["$offset"][0]), int(q["$limit"][0])
        body = '"pickup_longitude","pickup_latitude"\n' + "".join(
            f'"{a}","{b}"\n' for a, b in type(self).rows[off: off + lim])
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def soda(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    rng = np.random.default_rng(7)
    lon = np.round(rng.uniform(-74.2, -73.8, 2345), 6)   # some outside the Feldman box
    lat = np.round(rng.uniform(40.6, 41.0, 2345), 6)
    handler = type("H", (_SodaHandler,), {"rows": list(zip(lon, lat)), "requests": [], "fail": False})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{server.server_port}/resource/2yzn-sicd.csv"
    server.shutdown()
    server.server_close()


def test_download_pages_progress_and_cache(soda, tmp_path):
    handler, url = soda
    calls = []
    path = D.download_nyc_taxi(2000, base_url=url, page_size=300, cache_dir=tmp_path,
                               progress=lambda f, m: calls.append((f, m)))
    assert len(handler.requests) == 7                      # ceil(2000 / 300)
    assert [int(q["$offset"][0]) for q in handler.requests] == list(range(0, 2000, 300))
    got = pd.read_csv(path).to_numpy()
    np.testing.assert_array_equal(got, np.array(handler.rows[:2000]))
    fr = [f for f, _ in calls]
    assert fr == sorted(fr) and fr[-1] == 1.0 and len(calls) == 7
    assert not list(tmp_path.glob("*.part"))
    # second call: a cache hit, no request
    path2 = D.download_nyc_taxi(2000, base_url=url, page_size=300, cache_dir=tmp_path)
    assert path2 == path and len(handler.requests) == 7
    # asking for more than the server has stops at the end of the data set
    path3 = D.download_nyc_taxi(5000, base_url=url, page_size=1000, cache_dir=tmp_path)
    assert len(pd.read_csv(path3)) == 2345


def test_load_nyc_taxi_uses_cache(soda, tmp_path, monkeypatch):
    handler, url = soda
    monkeypatch.setattr(D.nyc_taxi, "NYC_TAXI_URL", url)
    monkeypatch.setattr(D.nyc_taxi, "NYC_TAXI_ROWS", 2345)
    monkeypatch.setenv("DPCORE_CACHE", str(tmp_path))
    assert D.info("nyc_taxi_2015_01")["needs_download"] is True
    fractions = []
    ds = D.load("nyc_taxi_2015_01", progress=lambda f, m: fractions.append(f))
    assert fractions[-1] == 1.0 and len(handler.requests) == 1
    X = np.array(handler.rows, dtype=float)
    lo, hi = D.TAXI_BOUNDS
    inside = ((X >= lo) & (X <= hi)).all(axis=1)
    np.testing.assert_array_equal(ds.X, X[inside])
    assert ds.n_dropped == (~inside).sum() > 0 and ds.geo and ds.columns == ["longitude", "latitude"]
    info = D.info("nyc_taxi_2015_01")
    assert info["cached"] is True and info["needs_download"] is False
    D.load("nyc_taxi_2015_01", max_rows=100)
    assert len(handler.requests) == 1                      # cache hit: no new request


def test_download_server_error_is_clear(soda, tmp_path):
    handler, url = soda
    handler.fail = True
    with pytest.raises(ConnectionError, match="could not reach NYC Open Data.*503.*DPCORE_DATA or upload a CSV"):
        D.download_nyc_taxi(500, base_url=url, cache_dir=tmp_path)
    assert not list(tmp_path.iterdir())                    # no partial cache left behind


def test_download_unreachable_is_clear(tmp_path, monkeypatch):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                              # nothing listens there now
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with pytest.raises(OSError, match="could not reach NYC Open Data.*DPCORE_DATA"):
        D.download_nyc_taxi(10, base_url=f"http://127.0.0.1:{port}/x.csv", cache_dir=tmp_path, timeout=5)


def test_upload_gzip_csv_and_cap(tmp_path):
    p = tmp_path / "pts.csv.gz"
    p.write_bytes(gzip.compress(b"x,y\n" + b"1,2\n" * 5000))
    assert D.read_table(p, filename=p.name).shape == (5000, 2)
    assert p.stat().st_size < 1000
    with pytest.raises(ValueError, match="unpacks to more than"):
        D.read_table(p, filename=p.name, max_bytes=1000)

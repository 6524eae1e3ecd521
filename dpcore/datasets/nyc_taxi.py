"""The NYC taxi trips of January 2015 from NYC Open Data (SODA API): downloaded once with progress, cached."""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from .dataset import Progress

#: NYC Open Data, "2015 Yellow Taxi Trip Data" (dataset 2yzn-sicd), SODA endpoint.
NYC_TAXI_URL = "https://data.cityofnewyork.us/resource/2yzn-sicd.csv"


NYC_TAXI_NAME = "nyc_taxi_2015_01"


NYC_TAXI_ROWS = 200_000


# --------------------------------------------------------------------------------------
# NYC taxi download (SODA API)
# --------------------------------------------------------------------------------------
def _cache_root(cache_dir) -> Path:
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("DPCORE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "dpcore"


def _taxi_cache_path(n_rows: int, base_url: str, cache_dir) -> Path:
    tag = "" if base_url == NYC_TAXI_URL else "_" + hashlib.sha1(base_url.encode()).hexdigest()[:10]
    return _cache_root(cache_dir) / f"{NYC_TAXI_NAME}_{int(n_rows)}{tag}.csv.gz"


def download_nyc_taxi(n_rows: int = NYC_TAXI_ROWS, *, base_url: str = NYC_TAXI_URL, page_size: int = 50_000,
                      progress: Progress | None = None, cache_dir=None, timeout: float = 60) -> Path:
    """Download NYC yellow-taxi pickups of January 2015 from NYC Open Data, with a disk cache.

    Pages through the SODA API of dataset 2yzn-sicd with
    ``$select=pickup_longitude,pickup_latitude``, ``$order=:id``, ``$limit``
    and ``$offset`` until ``n_rows`` rows have arrived (or the data set ends),
    writing a gzip CSV to a temporary file that is renamed into place only
    when complete (an interrupted download leaves no partial cache).  A cached
    file is returned without any request.

    Parameters
    ----------
    n_rows : int, default 200,000
        Rows to fetch (the first ``n_rows`` by record id).
    base_url : str
        SODA CSV endpoint.
    page_size : int, default 50,000
        Rows per request.
    progress : callable(fraction, message), optional
        Called after each page with the fraction of ``n_rows`` received; the
        last call has fraction 1.0.
    cache_dir : path, optional
        Cache folder; default ``$DPCORE_CACHE``, else ``~/.cache/dpcore``.
    timeout : float, default 60
        Seconds per request.

    Returns
    -------
    pathlib.Path
        The cached ``.csv.gz`` with columns ``pickup_longitude,pickup_latitude``.

    Raises
    ------
    ConnectionError
        NYC Open Data could not be reached or answered with an error.
    ValueError
        Bad ``n_rows``/``page_size``, or the server's CSV lacks the pickup columns.
    """
    if int(n_rows) < 1 or int(page_size) < 1:
        raise ValueError("n_rows and page_size must be positive whole numbers")
    n_rows, page_size = int(n_rows), int(page_size)
    target = _taxi_cache_path(n_rows, base_url, cache_dir)
    if target.is_file():
        if progress is not None:
            progress(1.0, f"using the cached copy {target}")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".part")
    tmp = Path(tmp_name)
    received = 0
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            writer = io.TextIOWrapper(gz, encoding="utf-8", newline="")
            out = csv.writer(writer, lineterminator="\n")
            out.writerow(["pickup_longitude", "pickup_latitude"])
            while received < n_rows:
                limit = min(page_size, n_rows - received)
                query = urllib.parse.urlencode({"$select": "pickup_longitude,pickup_latitude",
                                                "$order": ":id", "$limit": limit, "$offset": received},
                                               safe="$:,")
                url = f"{base_url}?{query}"
                rows = _fetch_page(url, timeout)
                out.writerows(rows)
                received += len(rows)
                if progress is not None:
                    progress(min(received / n_rows, 1.0) if len(rows) == limit else 1.0,
                             f"downloaded {received:,} of {n_rows:,} taxi trips")
                if len(rows) < limit:     # the data set has no more rows
                    break
            writer.flush()
            writer.detach()
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def _fetch_page(url: str, timeout: float) -> list[list[str]]:
    """One SODA page as rows ``[lon, lat]`` (strings); clear errors for network trouble."""
    advice = "; use a local copy via DPCORE_DATA or upload a CSV"
    req = urllib.request.Request(url, headers={"Accept": "text/csv", "User-Agent": "dpcore"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        raise ConnectionError(f"could not reach NYC Open Data ({url.split('?')[0]}): the server answered "
                              f"HTTP {exc.code} {exc.reason}{advice}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConnectionError(f"could not reach NYC Open Data ({url.split('?')[0]}): {reason}{advice}") from exc
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        return []
    header = [h.strip().lower() for h in header]
    try:
        i_lon, i_lat = header.index("pickup_longitude"), header.index("pickup_latitude")
    except ValueError:
        raise ValueError(f"NYC Open Data answered with columns {header}, not pickup_longitude/"
                         f"pickup_latitude{advice}") from None
    return [[r[i_lon], r[i_lat]] for r in reader if r]

"""The command line's grammar: every subcommand, its options and an example in its ``--help`` (argparse)."""
from __future__ import annotations

import argparse
import math
import textwrap

#: What a run's exit status means (every subcommand).
EXIT_STATUSES = textwrap.fill(
    "exit status: 0 done; 2 usage (a wrong option or value); 3 refused by the cap, a role or the store "
    "(a sentence on stderr, nothing recorded); 4 bad data (NaN, a text column, no bounds, an unreadable "
    "file: a sentence on stderr, nothing recorded); 1 the store or an engine failed.", 78)

_PROG = "python -m dpcore"


def _typed(cast, ok, why: str):
    """An argparse ``type``: ``cast`` the text, then refuse it with ``why`` unless ``ok(value)``."""
    def check(text: str):
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if cast is int else ''}number") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(why.format(text))
        return value
    return check


#: ε or a total: a positive finite number.
positive_float = _typed(float, lambda v: math.isfinite(v) and v > 0, "{} must be a positive number")
#: δ: a number in [0, 1).
unit_float = _typed(float, lambda v: 0.0 <= v < 1.0, "δ must be in [0, 1), got {}")
#: k or L: a whole number of at least 1.
positive_int = _typed(int, lambda v: v >= 1, "{} must be at least 1")


def _sub(subs, name: str, summary: str, example: str):
    return subs.add_parser(name, help=summary, description=textwrap.fill(summary, 78),
                           epilog=f"example:\n  {example}\n\n{EXIT_STATUSES}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)


def _data_options(p, *, algorithm: bool) -> None:
    p.add_argument("data", metavar="DATA",
                   help="a CSV or Parquet file (read as the app reads an upload: the same rows reach the same "
                        "account), a glob or folder of them (read where they lie by DuckDB), a database URL with "
                        "--table, or the name of a data set the app lists (built-in, $DPCORE_DATA, "
                        "dpcore_sources.toml)")
    p.add_argument("--name", help="the data's account in the release store (default: what the app names an upload "
                                  "of this file, 'upload:FILE', or the listed data set's name)")
    if algorithm:
        p.add_argument("--algorithm", required=True, metavar="KEY",
                       help="a private algorithm's key (python -c \"import dpcore; print(list(dpcore.ALGORITHMS))\")")
        p.add_argument("--n-clusters", type=positive_int, metavar="K", help="k, for the algorithms that take it")
    p.add_argument("--epsilon", type=positive_float, required=True, metavar="E", help="ε this draw spends (at most)")
    p.add_argument("--delta", type=unit_float, metavar="D", help="δ, for the (ε, δ) algorithms (required by them)")
    p.add_argument("--columns", metavar="C1,C2", help="the columns to cluster, comma-separated (a listed data set: "
                                                      "its own by default)")
    p.add_argument("--lower", metavar="L1,L2", help="public lower bounds, one per column, written --lower=L1,L2 "
                                                    "(the '=' lets them start with '-'); never read from the data")
    p.add_argument("--upper", metavar="U1,U2", help="public upper bounds, one per column (--upper=U1,U2)")
    p.add_argument("--privacy-id", metavar="COL", help="the column that says whose each row is: the release then "
                                                       "protects each person's rows together (person level)")
    p.add_argument("--max-contributions", type=positive_int, metavar="L",
                   help="L: at most L rows per person (person level; default 5, as the app)")
    p.add_argument("--bounding", choices=("sample", "weight"), default=None,
                   help="how a person's rows are bounded to L: every row weighted min(1, L/m) (the default where "
                        "the algorithm can weight, as the app) or a secret keyed sample of L rows")
    p.add_argument("--row-level", action="store_true",
                   help="protect single rows even when a listed data set has a person column")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="another parameter of the algorithm (VALUE as JSON: 10, 0.5, \"uniform\"); repeatable")
    p.add_argument("--engine", choices=("duckdb", "spark"),
                   help="read the files where they lie, out of core, instead of loading them (large data)")
    p.add_argument("--table", help="with a database URL as DATA: the table to read")
    p.add_argument("--drop-missing", action="store_true",
                   help="leave out rows with a missing value in a used column (as the app does with an upload) "
                        "instead of refusing the file")
    p.add_argument("--json", metavar="FILE", help="also write the recorded release (JSON) to FILE")


def build_parser() -> argparse.ArgumentParser:
    """The ``dpcore`` command line's parser (:func:`dpcore.cli.main` runs it).

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog=_PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(
            "Differentially private clustering from the command line, on the app's release store "
                    "($DPCORE_STORE, else the default file): every draw is recorded in the data's account before "
                    "it is shown, and refused over the total set for the data. It acts as the local data owner, "
                    "recorded as user@host (command line); a store with roles refuses what that identity may not "
                    "do.", 78),
        epilog=f"example:\n  {_PROG} draw trips.parquet --columns longitude,latitude --lower=-74.1,40.7 "
               f"--upper=-73.9,40.9 --algorithm eugkm --n-clusters 5 --epsilon 1\n\n{EXIT_STATUSES}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    draw = _sub(subs, "draw", "Draw a private clustering release and record it in the data's account.",
                f"{_PROG} draw trips.parquet --name taxi-2025-01 --columns longitude,latitude "
                "--lower=-74.1,40.7 --upper=-73.9,40.9 --algorithm eugkm --n-clusters 5 --epsilon 1")
    _data_options(draw, algorithm=True)

    san = _sub(subs, "sanitize", "Draw a sanitized database (dpcore.sanitize: weighted points anyone can analyse "
                                 "at any k for free) and record it.",
               f"{_PROG} sanitize trips.parquet --columns longitude,latitude --lower=-74.1,40.7 --upper=-73.9,40.9 "
               "--epsilon 1")
    _data_options(san, algorithm=False)

    cap = _sub(subs, "cap", "Show or set the total ε (and δ) all draws on a data set may spend together.",
               f"{_PROG} cap taxi-2025-01 --epsilon 3 --data trips-2025-01.parquet --columns longitude,latitude "
               "--lower=-74.1,40.7 --upper=-73.9,40.9")
    cap.add_argument("name", metavar="NAME", help="the data's account")
    cap.add_argument("--epsilon", type=positive_float, metavar="TOTAL", help="the total ε (omit to show the total)")
    cap.add_argument("--delta", type=unit_float, default=0.0, metavar="D", help="the total δ (default 0)")
    cap.add_argument("--data", metavar="DATA", help="a data set the store has not seen yet: its data (as for draw, "
                                                    "with --columns and the bounds), so that its account is keyed by "
                                                    "its rows from the start, as a draw keys it")
    for opt, what in (("--columns", "with --data: the columns"), ("--lower", "with --data: --lower=L1,L2"),
                      ("--upper", "with --data: --upper=U1,U2"), ("--privacy-id", "with --data: the person column"),
                      ("--table", "with --data as a database URL")):
        cap.add_argument(opt, help=what)
    cap.add_argument("--engine", choices=("duckdb", "spark"), help="with --data: read it where it lies")
    cap.add_argument("--drop-missing", action="store_true", help="with --data: as for draw")

    hist = _sub(subs, "history", "The data's ledger: every draw with its id, ε, who, when, published or not.",
                f"{_PROG} history taxi-2025-01")
    hist.add_argument("name", metavar="NAME", help="the data's account")

    pub = _sub(subs, "publish", "Publish a recorded draw (it costs no ε): the public gallery then shows it.",
               f"{_PROG} publish 12 --yes")
    pub.add_argument("id", type=int, metavar="ID", help="the release's id (release #ID)")
    pub.add_argument("--yes", action="store_true", help="confirm: without it, only say what would become public")

    _sub(subs, "verify", "Check the store's hash chains: the first altered row is named.", f"{_PROG} verify")

    exp = _sub(subs, "export", "Write a recorded release as JSON, CSV, an HTML report, a script that draws it "
                               "again (py) or a notebook that analyses it (ipynb).",
               f"{_PROG} export 12 --format ipynb --out taxi.ipynb")
    exp.add_argument("id", type=int, metavar="ID", help="the release's id")
    exp.add_argument("--format", choices=("json", "csv", "html", "py", "ipynb"), default="json")
    exp.add_argument("--out", metavar="FILE", help="the file to write (default: standard output)")
    exp.add_argument("--data", metavar="PATH", help="py: the data path written at the top of the script")

    ana = _sub(subs, "analyse", "k-means at any k on a release's published points: post-processing, no ε, "
                                "nothing recorded.",
               f"{_PROG} analyse 12 --n-clusters 10")
    ana.add_argument("id", type=int, metavar="ID", help="the release's id (published, or your own draw)")
    ana.add_argument("--n-clusters", type=positive_int, required=True, metavar="K", help="k")
    ana.add_argument("--json", metavar="FILE", help="also write the centres (JSON) to FILE")
    return parser

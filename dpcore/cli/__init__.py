"""The command line (issue 67): ``python -m dpcore`` and the ``dpcore`` console script.

The app is for choosing; the command line is for repeating, on the same release store, the same cap
and the same roles.  It acts as the local data owner, as the app's local mode does, recorded as
``user@host (command line)``; a store with roles configured refuses what that identity may not do.

Subcommands (``python -m dpcore COMMAND --help`` shows an example of each): ``draw``, ``sanitize``,
``cap``, ``history``, ``publish``, ``verify``, ``export``, ``analyse``.

Exit status: 0 done; 2 usage; 3 refused by the cap, a role or the store (a sentence on standard
error, nothing recorded); 4 bad data (NaN, a text column, no bounds, an unreadable file: a sentence
that says what to do, nothing recorded); 1 the store or an engine failed.  Never a traceback.

Examples
--------
>>> from dpcore.cli import main
>>> main(["verify", "--help"])  # doctest: +ELLIPSIS
usage: python -m dpcore verify [-h]
...
0
"""
from __future__ import annotations

import sys

from .parser import build_parser

#: Exit statuses.
OK, FAILED, USAGE, REFUSED, BAD_DATA = 0, 1, 2, 3, 4


def main(argv=None, *, stdout=None, stderr=None) -> int:
    """Run one command line; return its exit status (see the module docstring).

    Parameters
    ----------
    argv : list of str or None
        The arguments after the program name; None: ``sys.argv[1:]``.
    stdout, stderr : text streams or None
        Where results and sentences go; default the process's.

    Returns
    -------
    int
        0 done, 1 the store or an engine failed, 2 usage, 3 refused (nothing recorded), 4 bad data
        (nothing recorded).
    """
    from .commands import COMMANDS, Refused
    from .data import BadData, Usage

    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:       # --help (0) or a usage error (2, argparse printed why)
        return int(exc.code or 0)
    try:
        return COMMANDS[args.command](args, out, err)
    except Usage as exc:
        err.write(f"{parser.prog} {args.command}: {exc}\n")
        return USAGE
    except Refused as exc:
        err.write(f"Refused: {_nothing_recorded(exc)}\n")
        return REFUSED
    except BadData as exc:
        err.write(f"Bad data: {_nothing_recorded(exc)}\n")
        return BAD_DATA
    except KeyboardInterrupt:
        err.write("Stopped. A draw is recorded only once it has finished, so nothing was recorded by this run.\n")
        return 130
    except Exception as exc:        # the store (locked, unreachable, newer) or an engine: a sentence, no traceback
        from ..exceptions import StoreError
        from ..sources import SourceError
        what = "The release store" if isinstance(exc, StoreError) else (
            "The engine" if isinstance(exc, SourceError) else "dpcore")
        err.write(f"{what} could not finish: {type(exc).__name__}: {exc}\n")
        return FAILED


def _nothing_recorded(exc: Exception) -> str:
    """The refusal's sentence, saying what was recorded (nothing, unless it says otherwise)."""
    text = str(exc).rstrip()
    return text if "recorded" in text else text.rstrip(".") + ". Nothing was recorded."


__all__ = ["main", "OK", "FAILED", "USAGE", "REFUSED", "BAD_DATA"]

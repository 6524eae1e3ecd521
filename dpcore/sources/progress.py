"""Progress of the passes over a large source, for any display: the app's bar and the command line's.

A :class:`~dpcore.sources.DataSource` calls ``on_pass(label)`` before each pass over the rows and,
on DuckDB, ``on_progress(fraction)`` within a pass (the engine's own progress).  :class:`PassProgress`
turns these calls into one line of text and a fraction, and hands them to a ``show(fraction, text)``
callable: the app draws them with ``st.progress`` (``ui.data_picker.pass_progress``), the command line
as a bar on standard error (``dpcore.cli``).  The words are the same in both.

What the text says (how many passes, what each computes) is a fact about the run, not a release: a
display shows it only to whoever runs the step on the data (see ``ui.data_picker.pass_progress`` for
why the app hides it during a private fit).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

#: How people write the engines' names.
ENGINE_NAMES = {"duckdb": "DuckDB", "pyspark": "Spark", "postgres": "PostgreSQL", "postgresql": "PostgreSQL",
                "numpy": "memory"}


def engine_name(engine: str | None) -> str:
    """How people write an engine's name (``"duckdb"`` -> ``"DuckDB"``).

    Parameters
    ----------
    engine : str or None
        A source's ``engine`` attribute.

    Returns
    -------
    str
    """
    return ENGINE_NAMES.get(str(engine), str(engine or "the engine"))


class PassProgress:
    """The state of a step's passes over a source, as a fraction and one line of text.

    Parameters
    ----------
    what : str
        The step, as a person reads it ("Private release", "Row count").
    engine : str or None
        The source's engine (``source.engine``).
    show : callable (fraction, text) -> None
        Called at each pass (fraction 0) and at each progress report within a pass (fraction in [0, 1]).

    Examples
    --------
    >>> seen = []
    >>> p = PassProgress("Row count", "duckdb", lambda f, text: seen.append((f, text)))
    >>> p.on_pass("count"); p.on_progress(0.5)
    >>> seen[-1]
    (0.5, 'Row count: pass 1 over the data (count) in DuckDB…')
    """

    def __init__(self, what: str, engine: str | None, show: Callable[[float, str], None]):
        self.what, self.engine, self.show = what, engine_name(engine), show
        self.passes, self.label = 0, ""

    def text(self) -> str:
        """The current line: the step, the pass number, its label and the engine."""
        return f"{self.what}: pass {self.passes} over the data ({self.label}) in {self.engine}…"

    def on_pass(self, label: str) -> None:
        """A new pass begins (the source's ``on_pass``)."""
        self.passes += 1
        self.label = str(label)
        self.show(0.0, self.text())

    def on_progress(self, fraction: float) -> None:
        """Progress within the current pass (the source's ``on_progress``), clipped to [0, 1]."""
        self.show(min(max(float(fraction), 0.0), 1.0), self.text())


@contextlib.contextmanager
def watching(source, progress: PassProgress) -> Iterator[PassProgress]:
    """Route ``source``'s pass and progress callbacks to ``progress`` while the block runs, then restore them.

    Parameters
    ----------
    source : DataSource
        Any source (an array's :class:`~dpcore.sources.ArraySource` makes no calls).
    progress : PassProgress

    Yields
    ------
    PassProgress
    """
    old = getattr(source, "on_pass", None), getattr(source, "on_progress", None)
    source.on_pass, source.on_progress = progress.on_pass, progress.on_progress
    try:
        yield progress
    finally:
        source.on_pass, source.on_progress = old


__all__ = ["ENGINE_NAMES", "engine_name", "PassProgress", "watching"]

"""The page frame: set-up (hand pages to the router), errors as sentences, URL state."""
from __future__ import annotations

import contextlib
from pathlib import Path

import streamlit as st

from dpcore.algorithms.regime import OutOfRegimeError
from dpcore.exceptions import AccessDeniedError, BudgetExceededError, InfeasibleBudgetError
from dpcore.sources import SourceError


# -- page frame -----------------------------------------------------------------
def page_setup(page_file: str) -> None:
    """Call first in every page: makes a page opened by a direct link go through app.py's router.

    Streamlit runs a page of ``pages/`` in its legacy multipage mode when a
    freshly started server is first reached through that page's URL (before
    any session has run ``st.navigation``).  The page then lacks the router's
    frame (wide layout, page titles).  Hand over to ``app.py``, which reopens
    the same page with the same URL state.  Under ``AppTest`` the page is
    the main script and runs as it is.

    First of all it stops a page that may not be served: a non-loopback address without sign-in,
    or sign-in still to do (:func:`ui.identity.gate`, issue 24).
    """
    from .identity import gate
    st.session_state.pop("_dp_total_slot", None)   # the sidebar's total slot belongs to one run (ui.controls)
    gate()
    if st.session_state.get("_dp_routed"):
        return
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    ctx = get_script_run_ctx()
    main = getattr(ctx, "main_script_path", None)
    if main is None or Path(main).resolve() == Path(page_file).resolve():
        return
    st.session_state["_dp_redirect"] = (str(Path(page_file).resolve()), st.query_params.to_dict())
    st.switch_page(str(Path(main).resolve()))


# -- errors -------------------------------------------------------------------
@contextlib.contextmanager
def friendly_errors(what: str = "This step"):
    """Show a sentence, never a traceback, when dpcore rejects input.

    dpcore's ValueError/TypeError messages already say what to fix; anything
    unexpected gets a generic sentence and the details in a collapsed box.
    """
    try:
        yield
    except AccessDeniedError as exc:     # the store's own role check (issue 24): a hidden button is not the guard
        st.error(f"Not allowed for your role: {exc}")
        st.stop()
    except OutOfRegimeError as exc:
        # The fit's check gives the paper's reason; the advisor's measurements and pick are added here.
        said = exc.regime.advised().reason if exc.regime is not None else str(exc)
        st.error(f"Refused before using the data beyond its size (outside the paper's regime): {said}")
        st.stop()
    except InfeasibleBudgetError as exc:
        st.error(f"The privacy budget is too small for this data: {exc}")
        st.stop()
    except (ValueError, TypeError) as exc:
        st.error(f"{what} could not run: {exc}")
        st.stop()
    except BudgetExceededError as exc:
        st.error(f"Refused, to protect privacy: {exc}")
        st.stop()
    except SourceError as exc:      # the engine or database of a large source; the message says which
        st.error(f"{what} could not run where the data lie: {exc}")
        st.stop()
    except (ConnectionError, OSError) as exc:
        st.error(f"{what} could not reach the data: {exc}")
        st.stop()
    except MemoryError:
        st.error(f"{what} ran out of memory: try fewer rows (the row limit in the sidebar) or fewer grid cells.")
        st.stop()


# -- URL state ----------------------------------------------------------------
#: Settings that follow the person across pages (issue 31; δ since issue 56): one value in the session,
#: mirrored in the URL.
SHARED = ("dataset", "algorithm", "k", "epsilon", "delta")
#: The dataset picker's choice for an upload; an upload's own name never enters a URL (issue 56).
UPLOAD = "Upload a file…"


def _shared() -> dict:
    return st.session_state.setdefault("_dp_shared", {})


def url_default(name: str, default, cast=str, valid=None):
    """A widget default: the page URL's ``?name=value``, else the session's shared setting, else ``default``.

    The shared settings (:data:`SHARED`: dataset, algorithm, k, ε, δ) live in one session state, so ε
    chosen on one page is the ε on every other; a link with them in its URL reproduces the view.
    ``valid``, when given, is a predicate on the cast value (e.g. a widget's min/max): a hand-edited
    URL, or a setting another page allows and this one does not, falls back to ``default`` instead of
    making the widget raise.
    """
    for raw in (st.query_params.get(name), _shared().get(name) if name in SHARED else None):
        if raw is None:
            continue
        try:
            value = cast(raw)
        except (TypeError, ValueError, OverflowError):
            continue
        if valid is None or valid(value):
            return value
    return default


def kept_widget(factory, label: str, *, key: str, initial: dict | None = None, valid=None, **kwargs):
    """A widget whose value survives a visit to a page without it (issue 56: one working set per person).

    Streamlit forgets a widget's value when a page that does not draw it runs.  The value is kept
    under ``_dp_keep`` and handed back before the widget is made (then without ``initial``, the
    widget's default arguments, which would clash with a value set in the session).  ``valid``, a
    predicate on the kept value, drops a value the widget can no longer take (another file's columns).
    """
    keep = st.session_state.setdefault("_dp_keep", {})
    if key in keep:
        # The person's latest value (this page's widget, or the same key's on the page before), else the kept one;
        # set through the session so that it outlives this page (a widget's own value would not).
        value = st.session_state[key] if key in st.session_state else keep[key]
        if valid is None or valid(value):
            st.session_state[key] = value
            initial = None
        else:
            st.session_state.pop(key, None)
    value = factory(label, key=key, **(initial or {}), **kwargs)
    keep[key] = value
    return value


def forget_kept(*keys: str) -> None:
    """Forget kept widget values (e.g. the settings of an upload that was removed)."""
    keep = st.session_state.setdefault("_dp_keep", {})
    for key in keys:
        keep.pop(key, None)
        st.session_state.pop(key, None)


def set_url(**values) -> None:
    """Write the shareable page state (dataset, algorithm, k, epsilon, ...) into the URL and the session."""
    shared = _shared()
    for key, value in values.items():
        if value is None:
            continue
        if key == "dataset" and (str(value).startswith("upload:") or value == UPLOAD):
            # An upload is the session's (its bytes are kept by ui.data_picker): the picker's choice is shared,
            # and the URL names no file (a link to it would name a private file and open nothing).
            shared[key] = UPLOAD
            if "dataset" in st.query_params:
                del st.query_params["dataset"]
            continue
        if key in SHARED:
            shared[key] = str(value)
        if st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)

"""The buttons that spend, drawn from their models (issue 65): "Draw", "New draw", Compare's panels, "Publish".

Every button states the exact ε its draw records (:func:`ui.models.shared.draw_cost`, from the estimator's
budget plan) and, when the draw cannot fit under the data's total or the person's role forbids it, is shown
disabled with the sentence saying why, before anyone presses it.  A press only asks for the draw
(:func:`ui.releases.request_draw` or, for "New draw", :func:`ui.releases.request_new_draw`: ``on_click``
callbacks); the draw itself happens at the start of
the next run (:func:`ui.releases.private_releases`), before the page draws anything that depends on it, so
every total on the page includes it.  A refused new draw leaves the last draw, with its downloads, on screen.
"""
from __future__ import annotations

import streamlit as st

import dpcore

from .data_picker import exact_rows
from .identity import draw_refusal, identity, may
from .models import compare as CM
from .models.shared import (
    DrawButton,
    draw_button,
    draw_cost,
    fmt_epsilon,
    offer_words,
    person_words,
    publish_question,
    totals,
)
from .releases import (
    baseline,
    draw_key,
    draw_params,
    is_public,
    private_releases,
    public_preview,
    publishable,
    request_draw,
    request_new_draw,
)
from .store import release_store


def _title(ds) -> str:
    return getattr(ds, "title", None) or ds.name


def account_of(ds):
    """The data set's account (:func:`ui.models.shared.totals`) from the release store; an empty one without bounds."""
    recorded = publishable(ds)
    return totals(release_store() if recorded else None, ds.name, title=_title(ds), recorded=recorded)


def cost_of(ds, algorithm: str, params: dict):
    """What a draw of ``algorithm`` with ``params`` on ``ds`` records (:func:`ui.models.shared.draw_cost`)."""
    size = exact_rows(ds) if is_public(ds) else None      # a public data set's size is public
    return draw_cost(algorithm, draw_params(ds, algorithm, params), ds.X.shape[1], size=size)


def button_for(ds, algorithm: str, params: dict, *, new: bool = False, what: str = "Draw") -> DrawButton:
    """The model of the button that draws ``algorithm`` with ``params`` (ε included) on ``ds``."""
    store = release_store() if publishable(ds) else None
    refusal = draw_refusal(store, ds.name) if store is not None else None
    return draw_button(cost_of(ds, algorithm, params), account_of(ds), new=new, what=what, refusal=refusal,
                       help="Draws these settings with fresh, unpredictable noise and records the draw in the data's "
                            "account before it is shown. Drawing until a result looks good is itself a use of the "
                            "data.")


def show_button(button: DrawButton, *, key: str, on_click, args=(), where=None, primary: bool = False) -> None:
    """A spending button as its model says: enabled, or disabled with the sentence saying why (before any press)."""
    where = where or st
    where.button(button.label, key=key, on_click=on_click, args=args, disabled=not button.enabled,
                 type="primary" if primary else "secondary", help=button.help or None)
    if not button.enabled and button.why_not:
        where.caption(f"Cannot be drawn now: {button.why_not}")


def draw_on_click(ds, fingerprint: str, algorithm: str, epsilon: float, *, who: str, preview: bool = True,
                  **params):
    """The kept draw of these settings, or the cost and a "Draw" button first (issue 24, issue 56, issue 65).

    Nothing is drawn into the account when a page opens, on any data: without a kept draw the page
    says what a draw costs and records one only in the run after the person pressed "Draw" (or "New
    draw").  On data that is already public (embedded samples, teaching sets) and with ``preview``,
    the page shows a *preview* meanwhile: a fit with fresh noise kept in this session only, never
    recorded, never counted in the account and never published (:func:`ui.releases.public_preview`).

    Returns
    -------
    list of one fit (a recorded draw, or a preview with ``fit.preview`` True); or None (refused,
    shown; or not drawn yet, the button is shown).
    """
    fits = private_releases(ds, fingerprint, algorithm, [epsilon], who=who, draw_missing="asked", **params)
    if fits is None or fits[0] is not None:
        return fits
    p = dict(params, epsilon=float(epsilon))
    button = button_for(ds, algorithm, p)
    shows_preview = preview and is_public(ds)
    offer = st.container()
    offer.info(offer_words(_title(ds), button, account_of(ds), preview=shows_preview))
    show_button(button, key=f"draw_{who}", on_click=request_draw, args=(draw_key(ds, fingerprint, algorithm, p),),
                where=offer, primary=True)
    if shows_preview:
        return [public_preview(ds, fingerprint, algorithm, p)]
    return None


def draw_requested(ds, fingerprint: str, algorithm: str, epsilon: float, *, who: str, **params) -> None:
    """Make the draw of these settings now if its "Draw" or "New draw" was pressed (else nothing).

    A page with two draws calls this for both before it shows anything, so that every total it shows (the
    sidebar's, each panel's account) includes this run's draws (issue 65, point 4); the page's
    :func:`draw_on_click` then finds the draw kept.  A refusal is shown where this is called.
    """
    private_releases(ds, fingerprint, algorithm, [float(epsilon)], who=who, draw_missing="asked", **params)


def private_release(ds, fingerprint: str, algorithm: str, *, who: str, **params):
    """One private release (:func:`draw_on_click`); stops the page after a refusal or until "Draw" is pressed."""
    fits = draw_on_click(ds, fingerprint, algorithm, params.pop("epsilon"), who=who, **params)
    if fits is None:
        st.stop()
    regime = getattr(fits[0], "regime_", None)     # the public-input check the estimator ran (dpcore.algorithms.regime)
    if regime is not None:      # with the advisor's measurements and pick: the fit's check does not plan
        regime = regime.advised()
    if regime is not None and not regime.ok:
        st.warning(f"Outside the paper's regime for these inputs: {regime.reason}")
    return fits[0]


def release(ds, fingerprint: str, algorithm: str, *, who: str = "", **params):
    """A private release (recorded before it is shown) or a non-private baseline, by the algorithm's kind."""
    if dpcore.ALGORITHMS[algorithm].private:
        return private_release(ds, fingerprint, algorithm, who=who, **params)
    return baseline(ds, fingerprint, algorithm, **params)


def _draw_settings(fit) -> tuple[str, dict]:
    """The algorithm and parameters (ε and δ included) a kept draw was made with."""
    rel = getattr(fit, "release", None)
    if isinstance(rel, dict):
        p = dict(rel.get("parameters") or {})
        p["epsilon"] = float(rel["privacy"]["epsilon"])
        if rel["privacy"].get("delta"):
            p["delta"] = float(rel["privacy"]["delta"])
        return rel["algorithm"]["key"], p
    key = getattr(type(fit), "key", None) or ""
    return key, {k: v for k, v in fit.get_params().items() if k not in ("bounds", "random_state")}


def draw_controls(fit, ds=None, *, where=None, key: str = "new_draw") -> None:
    """Which draw is shown, where it is recorded, and the "New draw" button (spends again; disabled, with why,
    when it cannot fit under the total)."""
    where = where or st
    eps = fit.budget_.total()[0]
    if getattr(fit, "preview", False):
        where.caption(f"Preview on public data (ε = {fmt_epsilon(eps)}, fresh noise): not recorded, not counted "
                      "in this data's account, and not publishable. Press “Draw” above to record a draw.")
        return
    if getattr(fit, "release_id", None) is not None:
        where.caption(f"Draw {fit.draw} of these settings on this data · release #{fit.release_id} in the "
                      "release store, recorded before it was shown. Reruns, page switches, reloads and restarts "
                      "show this same draw.")
    else:
        where.caption(f"Draw {getattr(fit, 'draw', 1)} of these settings, kept for this session only: "
                      "without public bounds it is not private and is never recorded or published.")
    if ds is not None:
        algorithm, params = _draw_settings(fit)
        button = button_for(ds, algorithm, params, new=True)
    else:
        from .models.shared import Cost, Totals
        spent = fit.budget_.total()
        button = draw_button(Cost(spent[0], spent[1], spent[0], spent[1]), Totals("", ""), new=True)
    show_button(button, key=key, on_click=request_new_draw, args=(fit.key,), where=where)
    publish_control(fit, where=where, key=f"{key}_publish")


def publish_control(fit, *, where=None, key: str = "publish") -> None:
    """"Publish this release…": a recorded draw enters the public gallery (costs nothing; issue 31).

    A draw is a use of the data and was charged when it was recorded; publishing it is a separate,
    deliberate act, recorded with who published it.  Leaving it unpublished refunds nothing.
    """
    where = where or st
    rid = getattr(fit, "release_id", None)
    if rid is None:
        return
    store = release_store()
    done = store.publication(rid)
    if done is not None:
        where.caption(f"Published by {person_words(done[0])} on {done[1]:%Y-%m-%d %H:%M} UTC: it is in the public "
                      "gallery.")
        return
    if not may("publish"):
        where.caption("Not published. Publishing needs the owner's role, or the owner's permission for analysts "
                      "([dpcore] analysts_may_publish); the owner can publish this draw from the Release page.")
        return
    asking = st.session_state.get("_dp_publish_ask") == rid
    if not asking:
        if where.button("Publish this release…", key=key,
                        help="Asks first: what becomes public, by whom, with this data's total. Publishing costs "
                             "no ε (the draw was already charged); leaving it unpublished refunds nothing."):
            st.session_state["_dp_publish_ask"] = rid
            st.rerun()
        return
    # Publishing is a decision (issue 56): say what becomes public, under whose name, and the total it adds to.
    rel = fit.release
    name = rel["dataset"]["name"]
    info = store.dataset_info(name) or {}
    account = totals(store, name, title=info.get("description") or None)
    publisher = identity()          # the person, not "… · publish" (issue 65)
    box = where.container(border=True)
    box.warning(publish_question(rid, rel, person_words(publisher), account))
    yes, no = box.columns(2)
    if yes.button("Publish it", key=f"{key}_confirm", type="primary"):
        st.session_state.pop("_dp_publish_ask", None)
        store.publish(rid, who=publisher)
        st.rerun()
    if no.button("Cancel", key=f"{key}_cancel"):
        st.session_state.pop("_dp_publish_ask", None)
        st.rerun()


def compare_panels(ds, fingerprint: str, algorithm: str, epsilons, *, chosen: float, who: str, **params):
    """The fits of one setting at several ε for Compare's side-by-side panels, and their model (issue 65).

    On data that is already public every panel not drawn yet is a preview (:func:`ui.releases.public_preview`:
    fresh noise, recorded nowhere, free), shown at once.  On private data each panel is its own draw with
    fresh, unpredictable noise (a shared draw scaled by 1/ε would let ``ε_b·y_b − ε_a·y_a`` cancel it),
    recorded before it is shown, and drawn only after the person presses the button that states what the
    panels not drawn yet spend together (sequential composition).  Panels already drawn (here or on another
    page) are shown again at no cost.  Under a total, the panels that fit are drawn in the order shown and the
    others are named with their cost (issue 31).

    Returns
    -------
    (list with one fit or None per ε, :class:`ui.models.compare.PanelsModel`)
    """
    epsilons = [float(e) for e in epsilons]
    asked = st.session_state.pop("_dp_draw_panels", False)      # "Draw N panels" was pressed (a callback)
    # Draws asked for with a press only: the panels not drawn yet (what fits), or "New draws" of drawn ones.
    fits = private_releases(ds, fingerprint, algorithm, epsilons, who=who, draw_missing=True if asked else "asked",
                            what_fits=asked, **params)
    if fits is None:     # refused (the refusal is shown): what is drawn stays on screen
        fits = private_releases(ds, fingerprint, algorithm, epsilons, who=who, draw_missing=False, **params)
    public = is_public(ds)
    if public:
        fits = [f if f is not None else public_preview(ds, fingerprint, algorithm, dict(params, epsilon=e))
                for e, f in zip(epsilons, fits)]
    store = release_store() if publishable(ds) else None
    model = CM.panels_model(
        _title(ds), epsilons,
        [CM.MISSING if f is None else CM.PREVIEW if getattr(f, "preview", False) else CM.DRAWN for f in fits],
        chosen=chosen, cost_of=lambda e: cost_of(ds, algorithm, dict(params, epsilon=e)), account=account_of(ds),
        release_ids=[getattr(f, "release_id", None) for f in fits],
        refusal=draw_refusal(store, ds.name) if store is not None else None)
    return fits, model


def ask_for_panels() -> None:
    """Button callback: the next run draws Compare's panels not drawn yet (those that fit)."""
    st.session_state["_dp_draw_panels"] = True


def redraw_panels(keys) -> None:
    """Button callback: the next run draws these panels again (each spends again)."""
    for k in keys:
        request_new_draw(k)


__all__ = ["account_of", "ask_for_panels", "button_for", "compare_panels", "cost_of", "draw_controls",
           "draw_on_click", "draw_requested", "private_release", "publish_control", "redraw_panels", "release",
           "show_button"]

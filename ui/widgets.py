"""The pages' one import: every shared widget, each living in the module of its concern.

Pages stay thin: they call these to read inputs, get private results through
:func:`private_release` (drawn once with unpredictable noise, recorded in the
release store before it is shown, and kept until the person asks for a new
draw: a rerun, a page switch, a reload or a restart never draws fresh noise),
non-private references through :func:`baseline`, and draw with :mod:`ui.figures`.
Exact facts about the raw data go in the one :func:`raw_facts` panel.

Where things live: :mod:`ui.page` (frame, errors, URL), :mod:`ui.data_picker` (data, uploads,
bounds, large sources), :mod:`ui.controls` (sidebar controls), :mod:`ui.releases` (private draws
and references), :mod:`ui.draws` (the buttons that spend, from their models, :mod:`ui.models`),
:mod:`ui.account` (the store account, downloads, ledger), :mod:`ui.not_private`
(exact figures for the data owner, the raw-facts panel), :mod:`ui.curves` (privacy-utility curves).
"""
from dpcore.release.view import ReleasedFit

from .account import HISTORY_COLUMNS, account_caption, account_panel, publish_buttons, reference_strip, show_ledger
from .accuracy import accuracy_section, expected_error_caption, lookalike_words
from .advice import DEFAULT_PUBLIC_N
from .controls import (
    EPSILON_VALUES,
    algorithm_picker,
    algorithm_settings,
    analysis_controls,
    delta_input,
    epsilon_controls,
    epsilon_label,
    epsilon_slider,
    n_clusters_input,
    release_controls,
    sidebar_total,
    teach_toggle,
    unit_word,
    working_set,
)
from .curves import NO_CURVE_YET, curve_lookalike, utility_curves
from .data_picker import (
    UPLOAD,
    columns_words,
    dataset_picker,
    engine_name,
    exact_rows,
    fit_data,
    is_large,
    load_dataset,
    pass_progress,
    unit_params,
)
from .draws import (
    account_of,
    ask_for_panels,
    button_for,
    compare_panels,
    cost_of,
    draw_controls,
    draw_on_click,
    draw_requested,
    private_release,
    publish_control,
    redraw_panels,
    release,
    show_button,
)
from .identity import OWNER_ONLY, sees_raw
from .models.shared import NO_BOUNDS, fmt_epsilon
from .not_private import RAW_FACTS, csv_bytes, data_nicv, exact_density, not_private_caption, raw_facts
from .page import friendly_errors, page_setup, set_url, url_default
from .releases import (
    MAX_KEPT,
    baseline,
    draw_key,
    is_public,
    kmeans_reference,
    private_refit,
    private_releases,
    public_preview,
    publishable,
    request_draw,
    request_new_draw,
    rows_subset,
    unit_phrase,
)
from .store import release_store

__all__ = ["DEFAULT_PUBLIC_N", "accuracy_section", "expected_error_caption", "ReleasedFit", "HISTORY_COLUMNS",
           "account_caption",
           "account_panel", "reference_strip", "publish_buttons",
           "show_ledger",
           "EPSILON_VALUES", "algorithm_picker", "epsilon_controls", "algorithm_settings", "delta_input",
           "epsilon_label", "epsilon_slider",
           "n_clusters_input",
           "release_controls", "sidebar_total", "utility_curves", "NO_CURVE_YET", "curve_lookalike",
           "lookalike_words", "UPLOAD",
           "columns_words", "teach_toggle", "dataset_picker", "engine_name",
           "exact_rows", "fit_data", "is_large", "load_dataset", "pass_progress", "unit_params", "unit_phrase",
           "RAW_FACTS",
           "csv_bytes",
           "data_nicv", "exact_density", "not_private_caption", "raw_facts", "OWNER_ONLY", "sees_raw",
           "friendly_errors", "page_setup",
           "set_url", "url_default", "MAX_KEPT", "baseline", "kmeans_reference", "compare_panels", "draw_controls",
           "draw_on_click", "is_public", "private_refit", "public_preview", "publish_control",
           "private_release", "private_releases", "publishable", "release", "release_store", "request_draw",
           "request_new_draw",
           "rows_subset", "analysis_controls", "account_of", "ask_for_panels", "button_for", "cost_of", "draw_key",
           "redraw_panels", "show_button", "working_set", "NO_BOUNDS", "draw_requested", "fmt_epsilon", "unit_word"]

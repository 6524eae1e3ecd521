"""An ε move reruns only what depends on ε (issue 56, point 9): on every page that draws, the ε control and
everything after it run inside one ``@st.fragment`` function, so Streamlit reruns that function alone when ε
(or a control, a draw, a box opened below it) changes, not the data picker and algorithm above it.

AppTest reruns a whole script on every interaction, so it cannot see this; the browser check (a run counter,
stop 62) was done by hand.  This reads each page's source: a page whose ε control is moved out of its fragment
(or whose fragment decorator is dropped) fails here.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PAGES = Path(__file__).resolve().parents[1] / "pages"
#: The calls that draw the ε control (ui.widgets).
EPSILON_CONTROLS = {"epsilon_slider", "epsilon_controls"}
#: Every page that draws a release; Explain only explains (its ε slider feeds figures of public formulas).
DRAWING_PAGES = ["1_Explorer.py", "3_Private_coresets.py", "4_WaveCluster.py", "5_High_dimensional.py",
                 "6_Compare.py", "8_Release.py"]


def _called(node: ast.AST) -> set[str]:
    return {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            for n in ast.walk(node) if isinstance(n, ast.Call)}


def _is_fragment(fn: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Attribute) and d.attr == "fragment" for d in fn.decorator_list)


def test_every_page_that_draws_is_listed():
    drawing = {p.name for p in PAGES.glob("*.py") if _called(ast.parse(p.read_text())) & EPSILON_CONTROLS}
    assert drawing - {"7_Explain.py"} == set(DRAWING_PAGES), drawing


@pytest.mark.parametrize("page", DRAWING_PAGES)
def test_the_epsilon_control_and_what_follows_it_run_in_one_fragment(page):
    tree = ast.parse((PAGES / page).read_text())
    fragments = [n for n in tree.body if isinstance(n, ast.FunctionDef) and _is_fragment(n)]
    assert len(fragments) == 1, f"{page}: expected one top-level @st.fragment function, found {len(fragments)}"
    fragment = fragments[0]
    assert _called(fragment) & EPSILON_CONTROLS, f"{page}: the ε control is not inside {fragment.name}()"
    # Outside the fragment: no ε control, and no draw (a draw in the full run would rerun with every move).
    outside = [n for n in tree.body if n is not fragment]
    called_outside = set().union(*(_called(n) for n in outside))
    assert not called_outside & EPSILON_CONTROLS, f"{page}: an ε control outside the fragment"
    assert "draw_on_click" not in called_outside, f"{page}: a draw outside the fragment"
    # The fragment is called once, at the page's top level, after it is defined.
    calls = [n for n in outside if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
             and getattr(n.value.func, "id", None) == fragment.name]
    assert len(calls) == 1 and calls[0].lineno > fragment.lineno, f"{page}: {fragment.name}() is not run once"

"""The house shows the data path: dpcore and ui import only downward, with no cycle (issue 27).

The imports are read from the source with ``ast`` (module-level and function-level
imports alike: a lazy import inside a function is still a dependency, and a cycle
hidden behind it is still a cycle).  Layers, bottom up (docs/ARCHITECTURE.md):

    0  exceptions, synopsis, explain, glossary, _version   the ground floor: import nothing of dpcore but
       formatting                                    the one formatter of figures (imports nothing at all)
    1  utils/                                        validation, Domain, nearest-centre kernels
    2  privacy/ | sources/ | preprocessing           noise + ledger | exact aggregates | scalers
    3  advisor/                                      calibration table + model, separation read, plans, advice
    4  algorithms/                                   estimators by family, shared blocks, regime rules, registry
    5  metrics/
    6  datasets/
    7  release/
    8  store/
    9  evaluation/
    10 dpcore/__init__ (the face) and the contract's re-export paths dpcore.regime, dpcore.session_budget;
       beside it the command line, dpcore/cli/ and dpcore/__main__ (issue 67): a caller of the library
       like the app, importing any layer below but not the face, and no Streamlit
    11 ui/                                           ui/models/: the page models, no Streamlit (issue 65)

A module may import from a lower layer, or from its own package (``algorithms``
modules from each other).  The advisor sits beneath the algorithms: it imports no
estimator (the registry hands it the classes), so ``AutoKMeans`` and ``assess`` may
use its plans and no fit's check needs them.  Two packages that share a layer (``privacy`` and
``sources``) do not import each other: the sources never see noise.  No module
below the face imports the face (``from dpcore import X`` inside dpcore loads every
estimator: the cycle that ``import_module`` used to hide).
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

GROUND = {"dpcore.exceptions", "dpcore.synopsis", "dpcore.explain", "dpcore.glossary", "dpcore._version"}
#: Beneath the ground floor: the one formatter of figures (issue 65), which the ground floor's sentences use too.
BASEMENT = {"dpcore.formatting"}
RANK = {"utils": 1, "privacy": 2, "sources": 2, "preprocessing": 2, "advisor": 3, "algorithms": 4, "metrics": 5,
        "datasets": 6, "release": 7, "store": 8, "evaluation": 9}
FACE_RANK, UI_RANK = 10, 11
#: The command line: top-level modules of dpcore beside the face (they call the layers, as the app does).
CLI_MODULES = ("dpcore.cli", "dpcore.__main__")

#: Paths CONTRACT.md names outside the layers' packages: like the face, they only re-export.
FACE_PATHS = {"dpcore.regime", "dpcore.session_budget"}

#: (importer, imported) pairs still allowed while the restructuring is under way.  Empty at the end.
ALLOWED: set[tuple[str, str]] = set()
#: Import cycles still allowed while the restructuring is under way.  Empty at the end.
ALLOWED_CYCLES: list[list[str]] = []


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {}
    for top in ("dpcore", "ui"):
        for p in sorted((ROOT / top).rglob("*.py")):
            if "sample_data" in p.parts:
                continue
            found[module_name(p)] = p
    return found


def _resolve(importer: str, is_pkg: bool, node: ast.ImportFrom) -> list[str]:
    if node.level:
        base = importer.split(".")
        if not is_pkg:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        mod = ".".join(base + ([node.module] if node.module else []))
    else:
        mod = node.module or ""
    # "from pkg import sub" names a submodule when one exists; else it is an attribute of pkg.
    return [mod] + [f"{mod}.{a.name}" for a in node.names]


def _targets(targets: list[str], known) -> list[str]:
    """Drop ``pkg`` from ``from pkg import sub`` when every name imported is a submodule of it."""
    subs = targets[1:]
    if subs and all(s in known for s in subs):
        return subs
    return targets


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = _targets(_resolve(name, is_pkg, node), known)
            for t in targets:
                if t in known and t != name:
                    graph[name].add(t)
    return graph


def rank(module: str) -> tuple[int, str]:
    """(layer rank, package) of a module."""
    if module in ("ui",) or module.startswith("ui."):
        return UI_RANK, "ui"
    if module == "dpcore" or module in FACE_PATHS:
        return FACE_RANK, "face"
    if module in CLI_MODULES or module.startswith("dpcore.cli."):
        return FACE_RANK, "cli"
    if module in BASEMENT:
        return -1, module
    if module in GROUND:
        return 0, module
    top = module.split(".")[1]
    return RANK[top], top


def violations() -> set[tuple[str, str]]:
    known = modules()
    graph = imports(known)
    bad = set()
    for a, deps in graph.items():
        ra, pa = rank(a)
        for b in deps:
            rb, pb = rank(b)
            if pa == "face":
                continue  # the face and the contract's paths only re-export
            if b == "dpcore" and pa != "ui":
                bad.add((a, b))
            elif rb > ra or (rb == ra and pa != pb):
                bad.add((a, b))
    return bad


def cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    graph = imports(modules())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_layer():
    for name in modules():
        rank(name)  # KeyError names a module outside the layers


def test_no_upward_import():
    new = violations() - ALLOWED
    assert not new, "imports against the layers (importer -> imported):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in sorted(new))


def test_allow_list_only_shrinks():
    stale = ALLOWED - violations()
    assert not stale, f"fixed violations still on the allow-list, remove them: {sorted(stale)}"


def test_no_import_cycle():
    found = [c for c in cycles() if c not in ALLOWED_CYCLES]
    assert not found, "import cycles:\n" + "\n".join("  " + " <-> ".join(c) for c in found)


@pytest.mark.parametrize("pattern", ["from .dplloyd import", "from ..centroid.dplloyd import"])
def test_no_algorithm_borrows_from_dplloyd(pattern):
    users = [str(p.relative_to(ROOT)) for p in (ROOT / "dpcore").rglob("*.py")
             if pattern in p.read_text() and p.name != "__init__.py" and p.stem != "registry"]
    assert not users, f"modules borrowing DPLloyd's helpers (use algorithms/_blocks): {users}"


def test_the_command_line_imports_no_streamlit_and_nothing_imports_it():
    graph = imports(modules())
    cli = [m for m in modules() if rank(m)[1] == "cli"]
    assert "dpcore.cli" in cli and "dpcore.__main__" in cli
    for m in cli:
        text = modules()[m].read_text()
        assert "streamlit" not in text and not any(d.startswith("ui") for d in graph.get(m, ()))
    users = [a for a, deps in graph.items() if rank(a)[1] not in ("cli", "ui") and any(d in cli for d in deps)]
    assert not users, f"library modules importing the command line: {users}"


def test_no_module_over_600_lines():
    # One paper's algorithm may need more; each exception is named with its reason.
    exceptions = {}
    long = {str(p.relative_to(ROOT)): n for p in list((ROOT / "dpcore").rglob("*.py")) + list((ROOT / "ui").rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > 600 and str(p.relative_to(ROOT)) not in exceptions}
    assert not long, f"modules over 600 lines: {long}"


def _imports_streamlit(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
            return True
    return False


def test_page_models_import_no_streamlit():
    """ui/models/ computes what a page shows and is tested without Streamlit (issue 65): neither a model nor
    any ui module it imports (lazily or not) may import Streamlit."""
    known = modules()
    graph = imports(known)
    models = [m for m in known if m == "ui.models" or m.startswith("ui.models.")]
    assert "ui.models.shared" in models
    bad = {}
    for m in models:
        seen, todo = set(), [m]
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            todo.extend(graph.get(v, ()))
        hits = sorted(v for v in seen if v.startswith("ui") and _imports_streamlit(known[v]))
        if hits:
            bad[m] = hits
    assert not bad, f"page models reaching Streamlit (model -> modules importing streamlit): {bad}"

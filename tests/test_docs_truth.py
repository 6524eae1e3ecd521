"""Docs that stay true (issue 68): the module list, merge markers, and the Python examples of the docs.

``tests/test_docs.py`` checks the docstrings (numpydoc, their Examples, the Sphinx build); this module
checks the prose around them:

* every module of ``dpcore/`` and ``ui/`` (any subpackage, ``ui/models/`` included when it comes) is in
  ``docs/ARCHITECTURE.md``'s "One line per module";
* no tracked file holds a merge-conflict marker;
* the Python code blocks of ``README.md`` and ``docs/**/*.rst`` run.

How a documentation example is run
----------------------------------
Every ```` ```python ```` fence of a Markdown file and every ``.. code-block:: python`` (or ``code``,
``sourcecode``) of an rST file runs, in order, in one namespace per file (a later block may use an
earlier block's names, as a reader would); a block written as ``>>>`` lines runs as a doctest, its
outputs compared.  A block that needs something its text does not define says so in a marker on the
line before it, an HTML comment in Markdown (``<!-- docs-test: taxi -->``) or an rST comment
(``.. docs-test: gowalla, lake``), naming one or more of :data:`SETUPS`:

``taxi``
    ``X``: the embedded NYC taxi sample's 181,446 pickups (longitude, latitude); ``bounds``: its public box.
``gowalla``
    ``X``, ``bounds``, ``user_ids``: the first 20,000 Gowalla check-ins of ``$DPCORE_DATA`` and their users
    (the test is skipped, saying so, where the real data are absent).
``lake``
    The block runs in a temporary folder holding ``lake/trips/part-0.parquet``: 20,000 of the taxi pickups
    as ``pickup_longitude``, ``pickup_latitude`` (a real Parquet file where the example names a lake).
``skip: <why>``
    Not run, for the reason given (a Spark session on an S3 lake, a database server).  It is still
    compiled, and every call of a dpcore function or class in it is bound to that callable's signature,
    so a renamed function or parameter fails here too.
"""
from __future__ import annotations

import ast
import doctest
import inspect
import re
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


# -- the module list ---------------------------------------------------------------------------------
def _module_list() -> str:
    """The "One line per module" section of ARCHITECTURE.md."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.index("### One line per module")
    return text[start:text.index("\n### ", start + 1)]


def _listed(module: str, section: str) -> bool:
    """Whether ``module`` (``dpcore/store/keys.py``, ``ui/serve.py``) is named in the module list.

    By its path in backticks, from the repository or from ``dpcore/`` (```store/keys.py```); or by its file
    name in the bullet of its package (``- `store/` — ... `keys.py` ...``); a top-level module of dpcore by its
    file name in a bullet that is not a package's; a package's ``__init__.py`` by the package
    (```store/```) or its own path.
    """
    inner = module.removeprefix("dpcore/")
    folder, _, name = inner.rpartition("/")
    if (folder and f"`{inner}`" in section) or f"`{module}`" in section:
        return True
    if name == "__init__.py":
        return f"`{folder}/`" in section
    for bullet in re.split(r"\n(?=- )", section):
        head = re.match(r"- `([^`]+)`", bullet)
        if head is None or f"`{name}`" not in bullet:
            continue
        if (head.group(1) == f"{folder}/") if folder else not head.group(1).endswith("/"):
            return True
    return False


def _first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "(no module docstring)"
    return doc.strip().splitlines()[0]


def test_every_module_is_in_the_architecture_module_list():
    section = _module_list()
    modules = sorted(p.relative_to(ROOT).as_posix() for top in ("dpcore", "ui") for p in (ROOT / top).rglob("*.py")
                     if "__pycache__" not in p.parts)
    assert len(modules) > 100                       # the walk found the tree
    missing = [m for m in modules if not _listed(m, section)]
    assert not missing, ("docs/ARCHITECTURE.md's 'One line per module' misses these modules; add a line each, "
                         "e.g.:\n" + "\n".join(f"- `{m.removeprefix('dpcore/')}` — {_first_line(ROOT / m)}"
                                                  for m in missing))


def test_the_module_list_rule_can_fail():
    section = "- `store/` — `tables.py` (the schema)\n- `glossary.py` — plain words\n- `ui/` — `page.py`"
    assert _listed("dpcore/store/tables.py", section) and _listed("dpcore/glossary.py", section)
    assert _listed("ui/page.py", section) and _listed("dpcore/store/__init__.py", section)
    assert not _listed("dpcore/store/keys.py", section)
    assert not _listed("dpcore/tables.py", section)              # named only inside a package's bullet
    assert not _listed("ui/models/explorer.py", section) and not _listed("dpcore/privacy/__init__.py", section)


# -- merge markers ----------------------------------------------------------------------------------
#: A line a merge left behind: ``<<<<<<< HEAD`` or ``>>>>>>> branch`` (``=======`` alone is an rST underline).
MERGE_MARKER = re.compile(rb"^(<<<<<<<|>>>>>>>)( |$)", re.MULTILINE)


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [ROOT / p for p in out.decode().split("\0") if p]


def test_no_tracked_file_holds_a_merge_marker():
    files = _tracked_files()
    assert len(files) > 100
    found = []
    for path in files:
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8000]:                   # binary (Parquet, npz, PNG)
            continue
        for m in MERGE_MARKER.finditer(data):
            line = data.count(b"\n", 0, m.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0).decode()}")
    assert not found, "merge-conflict markers committed:\n" + "\n".join(found)


def test_the_merge_marker_rule():
    assert MERGE_MARKER.search(b"text\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> highdim\n")
    assert not MERGE_MARKER.search(b"Title\n=======\n\n  <<<<<<< quoted\n")


# -- the examples of the docs ------------------------------------------------------------------------
#: What a marker may ask for (see the module docstring); ``skip`` takes a reason.
SETUPS = ("taxi", "gowalla", "lake")


@dataclass(frozen=True)
class Block:
    """One Python example of a documentation file."""

    path: Path
    line: int              # where its code starts (1-based)
    code: str
    doctest: bool          # written as >>> lines
    setups: tuple[str, ...]
    skip: str | None       # the reason it is not run, or None

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _marker(lines: list[str], i: int, kind: str) -> tuple[tuple[str, ...], str | None]:
    """The setups and skip reason of the marker on the last non-blank line before line ``i``, if any."""
    j = i - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    pattern = r"<!--\s*docs-test:\s*(.*?)\s*-->" if kind == "md" else r"\.\.\s+docs-test:\s*(.*)"
    m = re.fullmatch(pattern, lines[j].strip()) if j >= 0 else None
    if m is None:
        return (), None
    text = m.group(1).strip()
    if text.startswith("skip:"):
        return (), text.removeprefix("skip:").strip()
    names = tuple(n.strip() for n in text.split(","))
    unknown = [n for n in names if n not in SETUPS]
    if unknown:
        raise ValueError(f"line {j + 1}: unknown docs-test setup(s) {unknown}; known: {SETUPS} and 'skip: <why>'")
    return names, None


def python_blocks(path: Path) -> list[Block]:
    """The Python examples of a Markdown or rST file, in order (see the module docstring)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    kind = "md" if path.suffix == ".md" else "rst"
    blocks = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if kind == "md" and re.fullmatch(r"\s*```python\s*", line):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            body, start = lines[i + 1:end], i + 2
        elif kind == "rst" and re.fullmatch(r"\s*\.\. (code-block|code|sourcecode):: (python|pycon)\s*", line):
            indent = len(line) - len(line.lstrip())
            j = i + 1
            while j < len(lines) and re.fullmatch(r"\s+:[\w-]+:.*", lines[j]):      # the directive's options
                j += 1
            end = j
            while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
                end += 1
            body, start = lines[j:end], j + 1
        elif kind == "rst" and line.lstrip().startswith(">>> ") and (i == 0 or not lines[i - 1].strip()):
            end = i
            while end < len(lines) and lines[end].strip():
                end += 1
            body, start = lines[i:end], i + 1
        else:
            i += 1
            continue
        code = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
        setups, skip = _marker(lines, i, kind)
        blocks.append(Block(path, start, code, code.lstrip().startswith(">>>"), setups, skip))
        i = end + 1
    return blocks


DOC_FILES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.rst"))
EXAMPLE_FILES = [p for p in DOC_FILES if python_blocks(p)]


def test_the_examples_are_found():
    """Guards the test below against collecting nothing: the files known to hold examples are among them."""
    names = {p.relative_to(ROOT).as_posix() for p in EXAMPLE_FILES}
    assert {"README.md", "docs/guide/sanitize.rst", "docs/guide/privacy_unit.rst", "docs/guide/sources.rst"} <= names
    assert sum(len(python_blocks(p)) for p in EXAMPLE_FILES) >= 6


# -- what a marker provides ---------------------------------------------------------------------------
def _taxi() -> dict:
    from dpcore import datasets
    ds = datasets.load("nyc_taxi_sample")
    return {"X": ds.X, "bounds": ds.bounds}


def _gowalla(shared_data: Path | None) -> dict:
    import pandas as pd

    from dpcore import datasets
    if shared_data is None:
        pytest.skip("this example needs the real Gowalla check-ins: set DPCORE_DATA")
    df = pd.read_csv(shared_data / "gowalla_nyc_checkins.csv.gz", nrows=20_000)
    return {"X": df[["longitude", "latitude"]].to_numpy(float), "bounds": datasets.GOWALLA_BOUNDS,
            "user_ids": df["user_id"].to_numpy()}


def _lake(folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    X = _taxi()["X"][::9][:20_000]
    (folder / "lake" / "trips").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"pickup_longitude": X[:, 0], "pickup_latitude": X[:, 1]}),
                   folder / "lake" / "trips" / "part-0.parquet")


def _from_dpcore(obj) -> bool:
    """A dpcore module, or a function, class or object defined in dpcore."""
    where = getattr(obj, "__module__", None) or getattr(obj, "__name__", None)
    return isinstance(where, str) and where.split(".")[0] == "dpcore"


def _check_calls(block: Block, namespace: dict) -> None:
    """A block that is not run: compile it, and bind each call of a dpcore callable to its signature."""
    tree = ast.parse(block.code, filename=block.where())
    names = dict(namespace)
    for node in ast.walk(tree):                # what the block imports from dpcore
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dpcore"):
            module = __import__(node.module, fromlist=["_"])
            names.update({a.asname or a.name: getattr(module, a.name) for a in node.names})
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("dpcore"):
                    names[a.asname or a.name.split(".")[0]] = __import__(a.name.split(".")[0])
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        chain, f = [], node.func
        while isinstance(f, ast.Attribute):
            chain.append(f.attr)
            f = f.value
        if not isinstance(f, ast.Name) or f.id not in names:
            continue
        obj = names[f.id]
        if not _from_dpcore(obj):
            continue
        for attr in reversed(chain):
            assert hasattr(obj, attr), f"{block.where()}: {ast.unparse(node.func)} does not exist"
            obj = getattr(obj, attr)
        if callable(obj):
            try:
                inspect.signature(obj).bind(*[None] * len(node.args),
                                            **{k.arg: None for k in node.keywords if k.arg is not None})
            except TypeError as err:
                raise AssertionError(f"{block.where()}: {ast.unparse(node)} does not fit "
                                     f"{ast.unparse(node.func)}{inspect.signature(obj)}: {err}") from None


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_examples_run(path, tmp_path, monkeypatch, capsys):
    from conftest import shared_data_dir
    namespace: dict = {"__name__": "__docs__"}
    for block in python_blocks(path):
        if block.skip is not None:
            _check_calls(block, namespace)
            continue
        for setup in block.setups:
            if setup == "taxi":
                namespace.update(_taxi())
            elif setup == "gowalla":
                namespace.update(_gowalla(shared_data_dir()))
            elif setup == "lake":
                _lake(tmp_path)
                monkeypatch.chdir(tmp_path)
        if block.doctest:
            test = doctest.DocTestParser().get_doctest(block.code, namespace, block.where(), str(path), block.line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            report: list[str] = []
            runner.run(test, out=report.append, clear_globs=False)
            assert runner.summarize(verbose=False).failed == 0, "".join(report)
        else:
            try:
                exec(compile(block.code, block.where(), "exec"), namespace)
            except Exception as err:
                raise AssertionError(f"the example at {block.where()} fails: {type(err).__name__}: {err}") from err
    capsys.readouterr()      # what the examples print is theirs


def test_an_example_that_is_not_run_is_still_checked():
    """A skipped block's calls of dpcore are bound to their signatures: a renamed function or parameter fails."""
    def block(code: str) -> Block:
        return Block(ROOT / "README.md", 1, code, False, (), "needs Spark")
    _check_calls(block('from dpcore import sources\nsources.from_spark(df, columns=["x"])\n'), {})
    with pytest.raises(AssertionError, match="does not fit"):
        _check_calls(block('from dpcore import sources\nsources.from_spark(df, colums=["x"])\n'), {})
    with pytest.raises(AssertionError, match="does not exist"):
        _check_calls(block("import dpcore\ndpcore.sources.from_lake(df)\n"), {})

"""The repository keeps its habits: these tests fail as soon as one rots.

Conventions (what each test reads; follow them when you change the layout or the docs):

* **Layers.** Every top-level part of the package has a layer (``LAYERS`` below):
  ``errors``/``resources``/``ports`` 0 < ``spec`` 1 < ``protocol`` 2 < ``plan``/``critics`` 3 <
  ``render``/``model``/``transport`` 4 < ``swarm`` 5 < ``testing``/``cli`` 6. A module may
  import its own layer or lower ones, never a higher one. Imports are found with ``ast``,
  at module level *and* inside functions; an import under ``if TYPE_CHECKING:`` never runs,
  so it may point upward and is left out of the upward check and of the circle check between
  subpackages (it must still name a module that exists). ``specswarm/__init__.py`` and
  ``__main__.py`` may import anything. A new top-level subpackage must be given a layer here,
  or the test fails.
* **No circles.** Between top-level subpackages, over every import that runs (module
  level and in functions), there is no circle. Between modules, over module-level imports,
  those under ``if TYPE_CHECKING:`` included, there is no cycle: a type two modules both need
  lives in a module below both, not in one of them. ``from specswarm.a import b`` is an edge
  to module ``specswarm.a.b`` if that module exists, else to the package ``specswarm.a``.
* **Sizes.** No module under ``specswarm/`` over ``MAX_MODULE_LINES`` lines; no class over
  ``MAX_CLASS_LINES`` lines (``end_lineno - lineno + 1``, decorators not counted).
* **Spec and event bodies are parsed once, at the edge.** Outside ``specswarm/spec/`` and
  ``specswarm/protocol/bodies.py`` the code (comments and string literals are not looked
  at) contains none of ``.body[``, ``.body.get(``, ``spec.get(``, ``spec_json``.
* **No machine paths.** No file tracked by git contains an absolute path of the machine the
  project was written on (the patterns are spelled below in pieces, so this file does not
  match itself).
* **docs/ARCHITECTURE.md's module map is true.** The map is the *first fenced code block
  after a heading that contains "Module map"* (e.g. ``## Module map``). In that block, a line
  whose first word ends in ``.py`` names one module by its path relative to ``specswarm/``,
  with ``/`` separators (it may be in backticks), e.g.::

      ## Module map
      ```
      errors.py             the error tree
      plan/__init__.py      re-exports fold, Plan
      plan/fold.py          FoldState.apply(event), fold(events) -> Plan
      swarm/roles/scorer.py votes on splits
      ```

  Every other line of the block (a heading such as ``plan/``, a separator, a wrapped
  description) is ignored, so it must not start with a ``.py`` word. Every module file under
  ``specswarm/`` must be listed, ``__init__.py`` and ``__main__.py`` included, and every
  listed path must exist.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import shutil
import subprocess
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "specswarm"

LAYERS: dict[str, int] = {
    "errors": 0,
    "resources": 0,
    "ports": 0,
    "spec": 1,
    "protocol": 2,
    "plan": 3,
    "critics": 3,
    "render": 4,
    "model": 4,
    "transport": 4,
    "swarm": 5,
    "testing": 6,
    "cli": 6,
}
"""Top-level part of ``specswarm`` (a subpackage or a top-level module) -> its layer."""

FREE_MODULES = {"specswarm", "specswarm.__main__"}
"""Modules that may import anything (the package root and ``python -m specswarm``)."""

MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 200

EDGE_ALLOWED = ("specswarm/spec/", "specswarm/protocol/bodies.py")
"""Where spec and event bodies are parsed from plain dicts (paths relative to the root)."""
STRING_KEY_READS = (".body[", ".body.get(", "spec.get(", "spec_json")

MACHINE_PATHS = tuple(
    "/" + "/".join(parts)
    for parts in (("work", ""), ("root", ""), ("home", ""), ("tmp", "specswarm" + "-run"))
)


# --- reading the package ---------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    source: str
    """The importing module (dotted)."""
    target: str
    """The imported specswarm module or package (dotted, resolved to an existing module)."""
    line: int
    in_function: bool
    type_checking: bool
    named: str
    """The dotted name the import statement gives (``target`` is its longest existing prefix)."""

    @property
    def exists(self) -> bool:
        return self.named == self.target

    def where(self) -> str:
        return f"{module_path(self.source)}:{self.line}"


def module_files() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_path(name: str) -> str:
    """The file of module ``name``, relative to the root (for messages)."""
    return MODULE_FILES.get(name, name.replace(".", "/") + ".py")


MODULE_FILES: dict[str, str] = {module_name(p): p.relative_to(ROOT).as_posix() for p in module_files()}


def top_part(name: str) -> str | None:
    """``specswarm.plan.fold`` -> ``plan``; the root package itself -> None."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_of(name: str) -> int | None:
    part = top_part(name)
    return 0 if part is None else LAYERS.get(part)


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def resolve(source: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    """The specswarm modules ``node`` imports, as (existing module, name given)."""
    out: list[tuple[str, str]] = []

    def add(name: str) -> None:
        if name == "specswarm" or name.startswith("specswarm."):
            # `import specswarm.a.b` or a `from` base that is not a module: the longest existing prefix
            parts = name.split(".")
            while len(parts) > 1 and ".".join(parts) not in MODULE_FILES:
                parts.pop()
            out.append((".".join(parts), name))

    if isinstance(node, ast.Import):
        for alias in node.names:
            add(alias.name)
        return out
    if node.level:
        package = source.split(".") if is_package else source.split(".")[:-1]
        base_parts = package[: len(package) - (node.level - 1)]
        base = ".".join(base_parts + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    if not (base == "specswarm" or base.startswith("specswarm.")):
        return out
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in MODULE_FILES:
            out.append((sub, sub))  # `from specswarm.a import b`, b a module
        else:
            add(base)
    return out


def _visit(
    node: ast.AST, source: str, is_package: bool, in_function: bool, type_checking: bool, out: list[Import]
) -> None:
    if isinstance(node, ast.Import | ast.ImportFrom):
        for target, named in resolve(source, is_package, node):
            out.append(Import(source, target, node.lineno, in_function, type_checking, named))
        return
    if isinstance(node, ast.If) and is_type_checking(node.test):
        for stmt in node.body:
            _visit(stmt, source, is_package, in_function, True, out)
        for stmt in node.orelse:
            _visit(stmt, source, is_package, in_function, type_checking, out)
        return
    inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    for child in ast.iter_child_nodes(node):
        _visit(child, source, is_package, inner, type_checking, out)


@functools.cache
def collect_imports() -> tuple[Import, ...]:
    """Every import of a specswarm module by a module under specswarm/."""
    out: list[Import] = []
    for path in module_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        _visit(tree, module_name(path), path.name == "__init__.py", False, False, out)
    return tuple(out)


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per back edge found by a depth-first search (each as a closed path)."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if colour[start] != white:
            continue
        stack: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        path = [start]
        colour[start] = grey
        while stack:
            node, todo = stack[-1]
            if not todo:
                stack.pop()
                path.pop()
                colour[node] = black
                continue
            nxt = todo.pop(0)
            state = colour.get(nxt, black)
            if state == grey:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif state == white:
                colour[nxt] = grey
                path.append(nxt)
                stack.append((nxt, sorted(graph[nxt])))
    return cycles


def describe(cycles: list[list[str]], where: dict[tuple[str, str], str]) -> str:
    """Each cycle, then each of its edges with the import that makes it."""
    out = []
    for c in cycles:
        out.append(" -> ".join(c))
        out.extend(f"    {a} -> {b}: {where[a, b]}" for a, b in zip(c, c[1:], strict=False))
    return "\n".join(out)


# --- layering and cycles ---------------------------------------------------------------


def test_every_top_level_part_has_a_layer() -> None:
    parts = {part for name in MODULE_FILES if (part := top_part(name)) not in (None, "__main__")}
    missing = sorted(p for p in parts if p is not None and p not in LAYERS)
    assert not missing, f"give these parts of specswarm a layer in tests/test_layout.py LAYERS: {missing}"


def test_every_specswarm_import_names_a_module() -> None:
    bad = [f"{i.where()}: imports {i.named}, no such module" for i in collect_imports() if not i.exists]
    assert not bad, "imports of modules that do not exist:\n" + "\n".join(bad)


def test_no_upward_import() -> None:
    bad = []
    for i in collect_imports():
        if i.type_checking or i.source in FREE_MODULES:
            continue
        src, tgt = layer_of(i.source), layer_of(i.target)
        if src is None or tgt is None:
            continue  # reported by test_every_top_level_part_has_a_layer
        if tgt > src:
            bad.append(
                f"{i.where()}: {i.source} (layer {src}: {top_part(i.source)}) imports "
                f"{i.target} (layer {tgt}: {top_part(i.target)})"
                + (" in a function" if i.in_function else "")
            )
    assert not bad, "upward imports (a layer may import only its own or lower layers):\n" + "\n".join(bad)


def test_no_circle_between_subpackages() -> None:
    graph: dict[str, set[str]] = {}
    where: dict[tuple[str, str], str] = {}
    for i in collect_imports():
        if i.type_checking or i.source in FREE_MODULES:
            continue
        a, b = top_part(i.source), top_part(i.target)
        if a is None or b is None or a == b:
            continue
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
        where.setdefault((a, b), f"{i.where()} imports {i.target}")
    cycles = find_cycles(graph)
    assert not cycles, "import circles between subpackages:\n" + describe(cycles, where)


def test_no_import_cycle_between_modules() -> None:
    graph: dict[str, set[str]] = {name: set() for name in MODULE_FILES}
    where: dict[tuple[str, str], str] = {}
    for i in collect_imports():
        if i.in_function or not i.exists or i.source == i.target:
            continue
        graph[i.source].add(i.target)
        kind = " (if TYPE_CHECKING)" if i.type_checking else ""
        where.setdefault((i.source, i.target), f"{i.where()} imports {i.named}{kind}")
    cycles = find_cycles(graph)
    assert not cycles, "module-level import cycles:\n" + describe(cycles, where)


# --- sizes -----------------------------------------------------------------------------


def test_modules_are_small() -> None:
    big = []
    for path in module_files():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            big.append(f"{path.relative_to(ROOT).as_posix()}: {n} lines")
    assert not big, f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(big)


def test_classes_are_small() -> None:
    big = []
    for path in module_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                n = node.end_lineno - node.lineno + 1
                if n > MAX_CLASS_LINES:
                    rel = path.relative_to(ROOT).as_posix()
                    big.append(f"{rel}:{node.lineno}: class {node.name}: {n} lines")
    assert not big, f"classes over {MAX_CLASS_LINES} lines:\n" + "\n".join(big)


# --- bodies parsed at the edge ---------------------------------------------------------


def code_only(text: str) -> list[str]:
    """The lines of ``text`` with comments and string literals blanked out."""
    lines = text.splitlines()
    blank: dict[int, list[tuple[int, int]]] = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.COMMENT, tokenize.STRING):
            continue
        (r0, c0), (r1, c1) = tok.start, tok.end
        for r in range(r0, r1 + 1):
            blank.setdefault(r, []).append((c0 if r == r0 else 0, c1 if r == r1 else len(lines[r - 1])))
    out = []
    for r, line in enumerate(lines, start=1):
        chars = list(line)
        for a, b in blank.get(r, []):
            chars[a:b] = " " * (b - a)
        out.append("".join(chars))
    return out


def test_no_string_key_reads_outside_the_edge() -> None:
    bad = []
    for path in module_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(EDGE_ALLOWED):
            continue
        for n, line in enumerate(code_only(path.read_text(encoding="utf-8")), start=1):
            for pattern in STRING_KEY_READS:
                if pattern in line:
                    bad.append(f"{rel}:{n}: {pattern!r}: {line.strip()}")
    assert not bad, (
        "string-key reads of a spec or an event body outside specswarm/spec/ and "
        "specswarm/protocol/bodies.py (use the typed GoalSpec / body fields):\n" + "\n".join(bad)
    )


# --- no machine paths ------------------------------------------------------------------


def tracked_files() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, timeout=30
    ).stdout.decode("utf-8")
    return [ROOT / p for p in out.split("\0") if p]


def test_no_absolute_machine_paths_in_tracked_files() -> None:
    needles = [p.encode() for p in MACHINE_PATHS]
    bad = []
    for path in tracked_files():
        if not path.is_file():
            continue  # deleted in the work tree, not yet committed
        data = path.read_bytes()
        for needle in needles:
            at = data.find(needle)
            if at >= 0:
                line = data.count(b"\n", 0, at) + 1
                bad.append(f"{path.relative_to(ROOT).as_posix()}:{line}: {needle.decode()}")
    assert not bad, "absolute machine paths in tracked files:\n" + "\n".join(bad)


# --- the architecture doc --------------------------------------------------------------

HEADING = re.compile(r"^#{1,6}\s.*module map", re.IGNORECASE)


def module_map(doc: str) -> list[str] | None:
    """The paths the module map lists (None when the doc has no module map)."""
    lines = doc.splitlines()
    heading = next((i for i, line in enumerate(lines) if HEADING.match(line)), None)
    if heading is None:
        return None
    fence = next((i for i in range(heading + 1, len(lines)) if lines[i].lstrip().startswith("```")), None)
    if fence is None:
        return None
    listed = []
    for line in lines[fence + 1 :]:
        if line.lstrip().startswith("```"):
            break
        words = line.split()
        first = words[0].strip("`") if words else ""
        if first.endswith(".py"):
            listed.append(first)
    return listed


def test_architecture_module_map_is_true() -> None:
    doc = ROOT / "docs" / "ARCHITECTURE.md"
    assert doc.is_file(), "docs/ARCHITECTURE.md is missing"
    listed = module_map(doc.read_text(encoding="utf-8"))
    assert listed is not None, (
        "docs/ARCHITECTURE.md has no module map: a heading containing 'Module map' followed by a "
        "fenced block of lines starting with a module path relative to specswarm/ (see tests/test_layout.py)"
    )
    actual = {p.relative_to(PKG).as_posix() for p in module_files()}
    missing = sorted(actual - set(listed))
    stale = sorted(set(listed) - actual)
    assert not missing and not stale, (
        "docs/ARCHITECTURE.md's module map is out of date:\n"
        + "".join(f"  not listed: {p}\n" for p in missing)
        + "".join(f"  listed but no such module: {p}\n" for p in stale)
    )

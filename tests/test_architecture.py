"""The layout's rules, read from the source with ``ast``:

- a private module is imported only from inside the package that directly holds its private
  part: ``citegraph.a.b._m`` (and ``citegraph.a.b._m.x``) only by ``citegraph.a.b`` (its
  ``__init__``, the face) and the modules under ``citegraph/a/b/``; at every level, so a sibling
  stage (``citegraph.a.c._n``) and the parent (``citegraph.a._p``) use ``citegraph.a.b``'s face,
  and ``citegraph.a.b._m`` may not import ``citegraph.a.b.c._n`` (private to ``c``); tests may
  import private modules;
- no import circles between modules (every import counts, function-level ones too, except those
  under ``if TYPE_CHECKING:``); a package's ``__init__`` is a module like the others, so a module
  that imports its own package's face from inside it makes a circle;
- no circles between the top-level packages either (``kg -> datasets -> kg``);
- no public function takes ``**options: Any``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def modules_under(src: Path) -> dict[str, Path]:
    """Every module of the ``citegraph`` package under ``src``, by dotted name (a package is
    its ``__init__``). ``benchmarks/layout_figures.py`` reads any checkout with it."""
    out = {}
    for path in sorted((src / "citegraph").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = modules_under(SRC)


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def imports_of(name: str, modules: dict[str, Path] = MODULES) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for each citegraph import of module ``name``."""
    path = modules[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full if full in modules else base), node.lineno


def module_graph(modules: dict[str, Path] = MODULES) -> dict[str, set[str]]:
    """Module -> the citegraph modules it imports."""
    graph: dict[str, set[str]] = {}
    for name in modules:
        targets = set()
        for target, _ in imports_of(name, modules):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith("citegraph") and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def top_package(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2])


def private_owner(target: str) -> str | None:
    """The package that may import ``target``: the one directly holding its last private part
    (``citegraph.a.b`` for ``citegraph.a.b._m`` and for ``citegraph.a._p.b._m``), or ``None``
    when no part of ``target`` is private."""
    parts = target.split(".")
    private = [i for i, part in enumerate(parts) if part.startswith("_") and part != "__init__"]
    return ".".join(parts[: private[-1]]) if private else None


def inside(name: str, package: str) -> bool:
    """Whether module ``name`` is ``package`` (its ``__init__``) or lies under it."""
    return name == package or name.startswith(f"{package}.")


def private_import_offences(src: Path = SRC) -> list[str]:
    """``path:line imports target`` for each import of a private module from outside the
    package that holds it (:func:`private_owner`), for the ``citegraph`` package under ``src``."""
    modules = MODULES if src == SRC else modules_under(src)
    offences = []
    for name, path in modules.items():
        for target, line in imports_of(name, modules):
            owner = private_owner(target) if target.startswith("citegraph.") else None
            if owner is not None and not inside(name, owner):
                offences.append(f"{path.relative_to(src).as_posix()}:{line} imports {target}")
    return sorted(set(offences))


def test_private_modules_are_imported_only_inside_their_package() -> None:
    assert private_import_offences() == []


def test_the_private_rule_holds_at_every_level(tmp_path: Path) -> None:
    assert private_owner("citegraph.kalma.score._item") == "citegraph.kalma.score"
    assert private_owner("citegraph.kalma._rules") == "citegraph.kalma"
    assert private_owner("citegraph.a._p.b._m") == "citegraph.a._p.b"
    assert private_owner("citegraph.kalma.score") is None
    files = {
        "a/__init__.py": "from citegraph.a.b import m\n",  # a face: allowed
        "a/_p.py": "from citegraph.a.b._m import m\n",  # the parent, past b's face
        "a/b/__init__.py": "from citegraph.a.b._m import m\n",  # b's own face: allowed
        "a/b/_m.py": "from citegraph.a.b.c._n import n\nm = 1\n",  # c's private module
        "a/b/c/__init__.py": "",
        "a/b/c/_n.py": "from citegraph.a.b._m import m\nfrom citegraph.a import _p\nn = 1\n",
        "a/d/__init__.py": "",
        "a/d/_q.py": "from citegraph.a.b import _m\nfrom citegraph.a.b import m\n",
    }
    for name, text in files.items():
        path = tmp_path / "citegraph" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert private_import_offences(tmp_path) == [
        "citegraph/a/_p.py:1 imports citegraph.a.b._m",
        "citegraph/a/b/_m.py:1 imports citegraph.a.b.c._n",
        "citegraph/a/d/_q.py:1 imports citegraph.a.b._m",
    ]


def test_no_import_circles_between_modules() -> None:
    assert cycles(module_graph()) == []


def test_no_import_circles_between_packages() -> None:
    packages: dict[str, set[str]] = {}
    for name, targets in module_graph().items():
        own = top_package(name)
        packages.setdefault(own, set()).update(
            top_package(t) for t in targets if top_package(t) != own
        )
    assert cycles(packages) == []


def public_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and methods of module-level classes, public by name; click
    command callbacks (decorated with ``.command(...)``) are the CLI's, not an API."""
    for node in tree.body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        for fn in inner:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            decorators = [ast.unparse(d) for d in fn.decorator_list]
            if fn.name.startswith("_") or any(".command(" in d for d in decorators):
                continue
            yield fn


def test_no_public_function_takes_loose_options() -> None:
    offences = []
    for path in MODULES.values():
        for node in public_functions(ast.parse(path.read_text(encoding="utf-8"))):
            kwarg = node.args.kwarg
            if kwarg is not None:
                annotation = ast.unparse(kwarg.annotation) if kwarg.annotation else "Any"
                if annotation in ("Any", "object"):
                    offences.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    assert offences == []


def test_the_cycle_finder_finds_circles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []

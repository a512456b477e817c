"""Print the layout's figures: modules and median module size per package, imports of another
package's private modules, and import circles between modules and between packages.

Run it on this checkout, or on an older one to compare (``--src OTHER/src``)::

    .venv/bin/python benchmarks/layout_figures.py
    .venv/bin/python benchmarks/layout_figures.py --src /tmp/old-checkout/src

Imports are read with ``ast`` (function-level ones count, ``if TYPE_CHECKING:`` ones do not), as
``tests/test_architecture.py`` reads them.
"""

from __future__ import annotations

import argparse
import ast
import statistics
from collections import defaultdict
from pathlib import Path


def modules(src: Path) -> dict[str, Path]:
    out = {}
    for path in sorted((src / "citegraph").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skip.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target.startswith("citegraph") and target != name:
                found.add(target)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            component.append(node)
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def top(name: str) -> str:
    return ".".join(name.split(".")[:2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    src = parser.parse_args().src
    known = modules(src)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    sizes: dict[str, list[int]] = defaultdict(list)
    for name, path in known.items():
        sizes[top(name)].append(len(path.read_text(encoding="utf-8").splitlines()))
    print(f"{'package':24} {'modules':>7} {'median lines':>12} {'largest':>7}")
    for package, lines in sorted(sizes.items()):
        print(f"{package:24} {len(lines):7d} {statistics.median(lines):12.0f} {max(lines):7d}")
    private = [
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if top(target) != top(name) and any(p.startswith("_") for p in target.split(".")[2:])
    ]
    print(f"\nimports of another package's private module: {len(private)}")
    for name, target in private[:10]:
        print(f"  {name} -> {target}")
    module_circles = circles(graph)
    packages: dict[str, set[str]] = defaultdict(set)
    for name, targets in graph.items():
        packages[top(name)].update(top(t) for t in targets if top(t) != top(name))
    package_circles = circles(packages)
    print(f"import circles between modules: {len(module_circles)}")
    for circle in module_circles:
        print("  " + " <-> ".join(circle))
    print(f"import circles between packages: {len(package_circles)}")
    for circle in package_circles:
        print("  " + " <-> ".join(circle))


if __name__ == "__main__":
    main()

"""Print the layout's figures: modules and median module size per package, imports of another
package's private modules, and import circles between modules and between packages.

Run it on this checkout, or on an older one to compare (``--src OTHER/src``)::

    .venv/bin/python benchmarks/layout_figures.py
    .venv/bin/python benchmarks/layout_figures.py --src /tmp/old-checkout/src

Imports are read with ``ast`` by the same functions as ``tests/test_architecture.py`` (which
holds the rules): function-level imports count, ``if TYPE_CHECKING:`` ones do not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_architecture import cycles, module_graph, modules_under, top_package  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    modules = modules_under(parser.parse_args().src)
    graph = module_graph(modules)
    sizes: dict[str, list[int]] = defaultdict(list)
    for name, path in modules.items():
        sizes[top_package(name)].append(len(path.read_text(encoding="utf-8").splitlines()))
    print(f"{'package':24} {'modules':>7} {'median lines':>12} {'largest':>7}")
    for package, lines in sorted(sizes.items()):
        print(f"{package:24} {len(lines):7d} {statistics.median(lines):12.0f} {max(lines):7d}")
    private = [
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if top_package(target) != top_package(name)
        and any(p.startswith("_") for p in target.split(".")[2:])
    ]
    print(f"\nimports of another package's private module: {len(private)}")
    for name, target in private[:10]:
        print(f"  {name} -> {target}")
    packages: dict[str, set[str]] = defaultdict(set)
    for name, targets in graph.items():
        own = top_package(name)
        packages[own].update(top_package(t) for t in targets if top_package(t) != own)
    for what, found in (("modules", cycles(graph)), ("packages", cycles(packages))):
        print(f"import circles between {what}: {len(found)}")
        for circle in found:
            print("  " + " <-> ".join(circle))


if __name__ == "__main__":
    main()

"""`make bench`: run every benchmark under tests/perf and print one table."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import tests.perf
from tests.perf.report import Row, print_table


def main(only: list[str]) -> int:
    rows: list[Row] = []
    for module in sorted(m.name for m in pkgutil.iter_modules(tests.perf.__path__)):
        if module.startswith("bench_") and (not only or module in only):
            rows += importlib.import_module(f"tests.perf.{module}").run()
    print()
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

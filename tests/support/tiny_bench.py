"""Running a benchmark of `make bench` once at its tiny size, inside `make test` (tests/bench/
test_tiny_benches.py, and tests/phoenix/test_tiny_bench.py for the one that needs Phoenix).

Each module under tests/perf named bench_* declares TINY: the module constants (its sizes,
repeats and pauses; "module.NAME" for another perf module's) that make it take seconds. They are
set, the module's run() is called as `make bench` calls it, and what it returned is printed as
`make bench` prints it. Nothing of the figures is checked: at this size none means anything,
and tests never depend on timing (docs/testing.md).
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import tests.perf
from tests.perf import pg_server
from tests.perf.report import Row, print_table
from tests.support.postgres import PostgresServer

BENCHES = sorted(
    m.name for m in pkgutil.iter_modules(tests.perf.__path__) if m.name.startswith("bench_")
)


def set_tiny(module: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """Set `module`'s TINY constants (each must exist: a renamed constant fails here)."""
    sizes: Any = getattr(module, "TINY", None)
    assert isinstance(sizes, dict) and sizes, f"{module.__name__} declares no TINY sizes"
    for name, value in sizes.items():
        owner, _, attribute = name.rpartition(".")
        target = importlib.import_module(f"tests.perf.{owner}") if owner else module
        assert hasattr(target, attribute), f"{module.__name__}.TINY names {name}, which is gone"
        monkeypatch.setattr(target, attribute, value)


def run_tiny(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    postgres: PostgresServer | None = None,
) -> list[Row]:
    """Run tests.perf.`name` at its tiny size, its databases in `tmp_path` (the bench's cache
    under ~/.cache is never touched) and on `postgres` (the suite's server) instead of a server
    of its own; check that it measured rows and printed each. Returns the rows."""
    module = importlib.import_module(f"tests.perf.{name}")
    set_tiny(module, monkeypatch)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(pg_server, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(pg_server, "SHARED", postgres)
    before = _databases(postgres)
    try:
        rows: list[Row] = module.run()
    finally:
        if postgres is not None:
            for database in _databases(postgres) - before:  # what it kept (its big one)
                postgres.drop_database(database)
    print_table(rows)
    printed = capsys.readouterr().out
    assert rows, f"{name} measured nothing"
    for row in rows:
        assert row.scenario in printed, row
        assert not math.isnan(row.ours), row
    return rows


def _databases(postgres: PostgresServer | None) -> set[str]:
    if postgres is None or not postgres.running:
        return set()
    return {row[0] for row in postgres.execute("SELECT datname FROM pg_database")}

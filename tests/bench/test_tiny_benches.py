"""Every benchmark of `make bench` runs once at a tiny size, so that no change (a column the
schema gains, a function renamed, a widget's label moved) can break the bench unseen: it once
failed on a fresh machine for a column added after its last run (tests/support/tiny_bench.py
says how). The one that needs Phoenix runs beside the Phoenix tests, on their Phoenix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.postgres import PostgresServer
from tests.support.tiny_bench import BENCHES, run_tiny

ELSEWHERE = {"bench_phoenix": "tests/phoenix/test_tiny_bench.py"}


def test_every_bench_module_is_run() -> None:
    # The list is made from the folder: a new bench_* module is run below without a word.
    assert {"bench_ingest", "bench_backends", "bench_search"} <= set(BENCHES)
    assert set(ELSEWHERE) <= set(BENCHES)
    for module, test in ELSEWHERE.items():
        assert f'"{module}"' in (Path(__file__).parents[2] / test).read_text(), test


@pytest.mark.parametrize("name", [name for name in BENCHES if name not in ELSEWHERE])
def test_the_bench_runs_at_a_tiny_size(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    postgres_server: PostgresServer,
) -> None:
    run_tiny(name, tmp_path, monkeypatch, capsys, postgres_server)

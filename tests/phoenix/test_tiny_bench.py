"""`make bench`'s Phoenix benchmark (tests/perf/bench_phoenix.py) once at its tiny size, on the
Phoenix these tests share (its trace goes to a project of its own), so that no change breaks it
unseen (tests/support/tiny_bench.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.perf import bench_phoenix
from tests.phoenix.conftest import SeededPhoenix
from tests.support.tiny_bench import run_tiny


def test_the_phoenix_bench_runs_at_a_tiny_size(
    phoenix: SeededPhoenix,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(bench_phoenix, "RUNNING", phoenix.phoenix)
    run_tiny("bench_phoenix", tmp_path, monkeypatch, capsys)

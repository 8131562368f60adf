"""`make bench` (tests/perf/__main__.py): a module that fails is said, and the others' figures
still make the table; the run then exits non-zero."""

from __future__ import annotations

import types

import pytest

from tests.perf import __main__ as bench_main
from tests.perf.report import Row


def test_a_failing_module_leaves_the_others_figures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def run_ok() -> list[Row]:
        return [Row("fine: a figure", 1.0, 1.0, "ms", "<= 2 ms", True)]

    def run_broken() -> list[Row]:
        raise RuntimeError("the bench's server did not start")

    modules = {
        "tests.perf.bench_diff": types.SimpleNamespace(run=run_broken),
        "tests.perf.bench_far": types.SimpleNamespace(run=run_ok),
    }
    monkeypatch.setattr(bench_main.importlib, "import_module", modules.__getitem__)
    monkeypatch.setattr(bench_main, "recorded_figures", dict)
    assert bench_main.main(["bench_diff", "bench_far"]) == 1
    out, err = capsys.readouterr()
    assert "fine: a figure" in out and "bench_diff: FAILED" in out
    assert "failed: bench_diff" in out and "the bench's server did not start" in err

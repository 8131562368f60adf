"""`make bench`: run every benchmark under tests/perf and print one table, and how busy the
machine was meanwhile: every figure is compared with a floor measured in the same run, but a
busy machine (other processes, or other machines on the same host taking its CPUs: "steal")
stretches both unevenly, so the table says whether the run was idle. Then a line for each row
that regressed against the figures recorded in docs/benchmarks.md (verdicts.py)."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import time
import traceback
from pathlib import Path

import tests.perf
from tests.perf.report import Row, print_table
from tests.perf.verdicts import recorded_figures, verdicts

BUSY_LOAD = 0.5  # more than this many runnable processes besides the benchmark: not idle
BUSY_STEAL = 2.0  # per cent of CPU time taken by other machines on the host


def cpu_times() -> tuple[int, int]:
    """(all CPU time, stolen CPU time) since boot, in clock ticks (Linux; zeros elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return 0, 0
    ticks = [int(f) for f in fields]
    return sum(ticks[:8]), ticks[7] if len(ticks) > 7 else 0


def machine_note(load_before: float, times_before: tuple[int, int]) -> str:
    total, steal = (now - then for now, then in zip(cpu_times(), times_before, strict=True))
    stolen = 100 * steal / total if total else 0.0
    load_after = os.getloadavg()[0]
    idle = load_before <= BUSY_LOAD and stolen <= BUSY_STEAL
    return (
        f"machine: {os.cpu_count()} CPUs; load average {load_before:.2f} before, "
        f"{load_after:.2f} after; {stolen:.1f}% of CPU time stolen by the host meanwhile: "
        + ("an idle run" if idle else "a shared, noisy run (figures vary from run to run)")
    )


def main(only: list[str]) -> int:
    rows: list[Row] = []
    load_before, times_before = os.getloadavg()[0], cpu_times()
    failed = []
    for module in sorted(m.name for m in pkgutil.iter_modules(tests.perf.__path__)):
        if module.startswith("bench_") and (not only or module in only):
            started = time.monotonic()
            try:
                found = importlib.import_module(f"tests.perf.{module}").run()
            except Exception:  # one module's failure leaves the others' figures standing
                traceback.print_exc()
                failed.append(module)
                found = [Row(f"{module}: FAILED (traceback above)", 0, 0, "", "runs", False)]
            rows += found
            print(f"{module}: {len(found)} rows in {time.monotonic() - started:.0f} s", flush=True)
    print()
    print_table(rows)
    print(machine_note(load_before, times_before))
    for line in verdicts(rows, recorded_figures()):
        print(line)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

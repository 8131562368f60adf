"""`make bench`'s verdicts against the figures recorded in docs/benchmarks.md (tests/perf/
verdicts.py): the recorded tables stay readable whole, and a row worse beyond the noise is
reported while the noise is not."""

from __future__ import annotations

import pytest

from tests.perf.report import Row
from tests.perf.verdicts import DOC, parse, recorded_figures, verdicts

TABLE = """
```
scenario                                           ours      floor   ratio  target             ok
-------------------------------------------------------------------------------------------------
ingest 50k spans over HTTP vs floor (time)       1.86s      1.42s    1.31x  ratio <= 2         yes
ingest 50k spans: spans per second              26.88k           –       –  >= 20 k/s          yes
search sqlite: 4 filters, page 21                0.52ms          –       –  p95 <= 100 ms      yes
alerts: round, 100 alerts over 1M traces       460.97ms   157.12ms   2.93x  <= 1000 ms         yes
  (the first: 100 changes, 70 webhooks)        782.78ms   157.12ms   4.98x  <= 1000 ms         yes
far: requests for first rows, none twice            1          1     1.00x  1 GET              yes
machine: 2 CPUs; load average 0.46 before, 0.81 after: an idle run
```
"""


def test_every_row_of_the_recorded_tables_is_read() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.endswith((" yes", " NO"))]
    recorded = recorded_figures()
    assert len(recorded) == len(rows) > 100
    assert recorded["ingest 50k spans: spans per second"].ours == pytest.approx(26.88)
    detail = recorded["postgres: 1M: alert round, 100 alerts / (the first: every alert changes)"]
    assert detail.unit == "ms" and detail.floor == pytest.approx(13.49)


def test_a_row_is_read_from_the_right() -> None:
    recorded = parse(TABLE)
    assert set(recorded) == {
        "ingest 50k spans over HTTP vs floor (time)",
        "ingest 50k spans: spans per second",
        "search sqlite: 4 filters, page 21",
        "alerts: round, 100 alerts over 1M traces",
        "alerts: round, 100 alerts over 1M traces / (the first: 100 changes, 70 webhooks)",
        "far: requests for first rows, none twice",
    }
    page = recorded["search sqlite: 4 filters, page 21"]
    assert (page.ours, page.unit, page.floor) == (0.52, "ms", 0.0)
    assert recorded["far: requests for first rows, none twice"].target == "1 GET"


def test_a_line_that_is_not_a_row_or_a_row_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="not a row"):
        parse(TABLE.replace("1.31x  ratio", "1.31x ratio"))
    twice = TABLE.replace("far: requests", "ingest 50k spans: spans per second\nfar: requests")
    with pytest.raises(ValueError):
        parse(twice)


def rows(rate: float, ingest: float, floor: float, page: float, first: float) -> list[Row]:
    return [
        Row("ingest 50k spans over HTTP vs floor (time)", ingest, floor, "s", "ratio <= 2", True),
        Row("ingest 50k spans: spans per second", rate, 0, "k", ">= 20 k/s", True),
        Row("search sqlite: 4 filters, page 21", page, 0, "ms", "p95 <= 100 ms", True),
        Row("alerts: round, 100 alerts over 1M traces", 460.0, 157.0, "ms", "<= 1000 ms", True),
        Row("  (the first: 100 changes, 70 webhooks)", first, 157.0, "ms", "<= 1000 ms", True),
        Row("a row recorded nowhere", 1.0, 0, "ms", "-", True),
    ]


def test_rows_within_the_noise_pass() -> None:
    # A fifth slower, a busy machine (the figure and its floor both twice as long), a sub-
    # millisecond row that doubled: noise.
    found = verdicts(rows(22.0, 3.7, 2.8, 1.04, 790.0), parse(TABLE))
    assert len(found) == 1, found
    assert "5 rows compared, 0 regressed" in found[0] and "1 with no figure" in found[0]


def test_a_regressed_row_gets_a_line_of_its_own() -> None:
    # The ingest rate down to a third (issue 40's regression), and the first alert round, an
    # indented row, twice as slow against the same floor.
    found = verdicts(rows(9.75, 5.13, 0.93, 0.5, 1600.0), parse(TABLE))
    regressed = [line for line in found if line.startswith("REGRESSED")]
    assert [line.split(":")[0] for line in regressed] == [
        "REGRESSED ingest 50k spans over HTTP vs floor (time)",
        "REGRESSED ingest 50k spans",
        "REGRESSED alerts",
    ]
    assert "spans per second: 9.75k, recorded 26.88k" in regressed[1]
    assert "(the first: 100 changes, 70 webhooks): 1600.00ms" in regressed[2]
    assert "5 rows compared, 3 regressed" in found[-1]

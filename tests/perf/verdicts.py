"""`make bench`'s verdicts: each row compared with the figure recorded in docs/benchmarks.md, and
one line for every row that got worse beyond the noise, so a slower figure cannot pass unseen
(ingest lost two thirds of its speed once, and no row said so: nobody had run them since).

The recorded figures are the tables docs/benchmarks.md shows, as `make bench` printed them: the
fenced blocks whose first line is the table's header. A row is known by its scenario; an
indented row (a detail of the one above it) by both, as "parent / detail".

What counts as noise, measured on this shared 2-core machine (docs/benchmarks.md): a figure
varies by up to a fifth from run to run on an idle machine, and by several times on a busy one,
where the floor measured in the same run stretches with it; a floor of a fraction of a
millisecond varies as much as the figure. So a row regressed when its figure is worse than the
recorded one by more than NOISE, and by more than its unit's SLACK (a 0.3 ms row that became
0.5 ms is not news), and, for a row with a floor, its ratio to the floor is worse by more than
NOISE too (the whole machine slower is not a regression). Worse is higher, except for rates (the
unit "k") and rows whose target is a lower bound (">=").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.perf.report import Row

DOC = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
NOISE = 0.30
SLACK = {"ms": 1.0, "s": 0.05, "MB": 5.0, "k": 0.5, "B": 64.0, "%": 0.5, "": 0.0}
HEADER = re.compile(r"^scenario\s+ours\s+floor\s+ratio\s+target\s+ok\s*$")
# The columns print_table writes, read from the right: the scenario may hold anything.
LINE = re.compile(
    r"^(?P<scenario>.+?)\s+(?P<ours>-?\d[\d.]*)(?P<unit>[A-Za-z%]*)\s+"
    r"(?P<floor>-?\d[\d.]*[A-Za-z%]*|–)\s+(?P<ratio>\d[\d.]*x|–)\s{2}(?P<target>[^–\s].*?)\s+"
    r"(?P<ok>yes|NO)\s*$"
)


@dataclass(frozen=True)
class Recorded:
    """A row as docs/benchmarks.md records it."""

    key: str
    ours: float
    unit: str
    floor: float  # 0 when the row has none
    target: str


def key_of(scenario: str, parent: str) -> str:
    """A row's key: its scenario, or "parent / detail" for an indented one."""
    if scenario.startswith(" ") and parent:
        return f"{parent.strip()} / {scenario.strip()}"
    return scenario.strip()


def parse(text: str) -> dict[str, Recorded]:
    """Every row of the tables in `text` (markdown), by key. Raises ValueError for a line of a
    table that is not a row, or a key recorded twice: the recorded figures must stay readable."""
    recorded: dict[str, Recorded] = {}
    in_table = False
    parent = ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_table = False
            continue
        if HEADER.match(line):
            in_table, parent = True, ""
            continue
        if not in_table or not line.strip() or set(line.strip()) == {"-"}:
            continue
        if line.startswith("machine:"):
            continue
        found = LINE.match(line)
        if found is None:
            raise ValueError(f"line {number} of the recorded figures is not a row: {line!r}")
        scenario = found["scenario"]
        key = key_of(scenario, parent)
        if not scenario.startswith(" "):
            parent = scenario
        if key in recorded:
            raise ValueError(f"line {number}: {key!r} is recorded twice")
        floor = found["floor"]
        recorded[key] = Recorded(
            key,
            float(found["ours"]),
            found["unit"],
            0.0 if floor == "–" else float(re.sub(r"[A-Za-z%]+$", "", floor)),
            found["target"].strip(),
        )
    return recorded


def higher_is_better(unit: str, target: str) -> bool:
    return unit == "k" or target.startswith(">=")


def worse(now: float, then: float, higher_better: bool) -> float:
    """How much worse `now` is than `then`, as a fraction (negative: better; 0 for a zero)."""
    if now <= 0 or then <= 0:
        return 0.0
    return then / now - 1 if higher_better else now / then - 1


def regressed(row: Row, before: Recorded) -> bool:
    """Whether `row` is worse than `before` beyond the noise (see the module's docstring)."""
    better_up = higher_is_better(row.unit, row.target)
    if worse(row.ours, before.ours, better_up) <= NOISE:
        return False
    if abs(row.ours - before.ours) <= SLACK.get(row.unit, 0.0):
        return False
    if row.floor and before.floor:
        return worse(row.ours / row.floor, before.ours / before.floor, better_up) > NOISE
    return True


def verdicts(rows: list[Row], recorded: dict[str, Recorded]) -> list[str]:
    """One line per row that regressed beyond the noise, then one that sums the comparison."""
    lines = []
    compared = new = 0
    parent = ""
    for row in rows:
        key = key_of(row.scenario, parent)
        if not row.scenario.startswith(" "):
            parent = row.scenario
        before = recorded.get(key)
        if before is None or before.unit != row.unit:
            new += 1
            continue
        compared += 1
        if regressed(row, before):
            higher = higher_is_better(row.unit, row.target)
            ratio = ""
            if row.floor and before.floor:
                then = before.ours / before.floor
                ratio = f", {row.ratio:.2f}x its floor against {then:.2f}x"
            lines.append(
                f"REGRESSED {key}: {row.ours:.2f}{row.unit}, recorded {before.ours:.2f}"
                f"{before.unit} ({worse(row.ours, before.ours, higher):.0%} worse{ratio}; "
                f"target {row.target})"
            )
    lines.append(
        f"against {DOC.name}: {compared} rows compared, {len(lines)} regressed beyond the noise "
        f"(worse by over {NOISE:.0%}, in its ratio to its floor too), {new} with no figure "
        "recorded"
    )
    return lines


def recorded_figures(path: Path = DOC) -> dict[str, Recorded]:
    return parse(path.read_text(encoding="utf-8"))

"""The reliability suite's `soak` tests (the marker is in pyproject.toml): long runs of the same
fault (many rounds of kill -9), left out of `make test` unless asked for with `-m soak`
(`make soak`)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    selection = config.getoption("markexpr", "") or ""
    if "soak" in selection and "not soak" not in selection:
        return
    skip = pytest.mark.skip(reason="a soak run: select it with -m soak")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)

"""schemathesis against the local service's own OpenAPI document: whatever the document allows
(and the edge cases around it), the service answers without a server error, with the content
type and the response shapes it documents."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from tests.support.service import RunningService, start_service

schema = schemathesis.pytest.from_fixture("openapi_schema")


@pytest.fixture(scope="module")
def fuzzed_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningService]:
    """A service of its own: the fuzzer creates projects and alerts."""
    running = start_service(tmp_path_factory.mktemp("fuzzed") / "fuzzed.sqlite3")
    yield running
    running.service.stop()


@pytest.fixture(scope="module")
def openapi_schema(fuzzed_service: RunningService) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{fuzzed_service.base_url}/openapi.json")


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_service_keeps_to_its_openapi_document(
    case: schemathesis.Case, fuzzed_service: RunningService
) -> None:
    case.call_and_validate(
        base_url=fuzzed_service.base_url.removesuffix("/v1"),
        headers={"Authorization": f"Bearer {fuzzed_service.keys.workspace}"},
        checks=[not_a_server_error, content_type_conformance, response_schema_conformance],
    )

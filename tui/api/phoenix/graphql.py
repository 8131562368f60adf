"""The GraphQL queries the Phoenix reader sends (`POST /graphql`), for what Phoenix's REST API
does not give: the cost it computes per span and per trace from its model prices.

Never one query per row: a page of the trace list asks for its rows' costs with a field alias
per trace, ALIASES_PER_QUERY of them a query (Phoenix refuses a query with more aliases), and a
trace's spans' costs come in one query, paged by Phoenix's connection cursor past
SPANS_PER_QUERY spans. Only the spans Phoenix can have costed are asked for (COSTED_SPANS:
Phoenix computes a cost from a span's `llm.token_count.*` attributes, and a span without them
has none), so a 10,000-span agent run with 1,000 LLM calls is one query, not ten. The answers
are read tolerantly: a field that is missing or null is a cost not known, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tui.core.lenient import to_float

SPANS_PER_QUERY = 1000  # Phoenix refuses `first` above 1000
ALIASES_PER_QUERY = 50  # Phoenix refuses a query with more field aliases
# Phoenix's span filter (a Python expression over span fields): the spans that may have a cost.
COSTED_SPANS = " or ".join(
    f"llm.token_count.{count} is not None" for count in ("prompt", "completion", "total")
)

TRACE_COSTS = """
query TraceCosts($project: ID!, $trace: ID!, $first: Int!, $after: String, $filter: String) {
  node(id: $project) {
    ... on Project {
      trace(traceId: $trace) {
        costSummary { total { cost } }
        spans(first: $first, after: $after, filterCondition: $filter) {
          pageInfo { hasNextPage endCursor }
          edges { node { id costSummary { total { cost } } } }
        }
      }
    }
  }
}
"""


def trace_costs_query(
    project_gid: str, trace_id: str, after: str | None = None, every_span: bool = False
) -> dict[str, Any]:
    """The request body for a trace's total cost and its spans' costs: the spans that may have
    one (COSTED_SPANS), or `every_span` for a Phoenix that does not take the filter."""
    return {
        "query": TRACE_COSTS,
        "variables": {
            "project": project_gid,
            "trace": trace_id,
            "first": SPANS_PER_QUERY,
            "after": after,
            "filter": None if every_span else COSTED_SPANS,
        },
    }


def read_trace_costs(
    answer: Any,
) -> tuple[float | None, dict[str, float], str | None]:
    """(the trace's total cost, each span's cost by Phoenix's GlobalID of the span (its REST
    `id`: asked rather than `spanId`, which Phoenix looks up span by span), the cursor of the
    next page of spans or None) from a TraceCosts answer."""
    trace = dig(answer, "data", "node", "trace")
    if not isinstance(trace, Mapping):
        return None, {}, None
    total = to_float(dig(trace, "costSummary", "total", "cost"))
    costs: dict[str, float] = {}
    spans = trace.get("spans")
    edges = spans.get("edges") if isinstance(spans, Mapping) else None
    for edge in edges if isinstance(edges, list) else ():
        node = dig(edge, "node")
        global_id = dig(node, "id")
        cost = to_float(dig(node, "costSummary", "total", "cost"))
        if isinstance(global_id, str) and cost is not None:
            costs[global_id] = cost
    after = None
    if dig(spans, "pageInfo", "hasNextPage") is True:
        cursor = dig(spans, "pageInfo", "endCursor")
        after = cursor if isinstance(cursor, str) else None
    return total, costs, after


# Each row's own annotations (not its spans': Phoenix has no field for those on a trace), for
# the list's summary, in the same query as its cost.
TRACE_ANNOTATIONS = "traceAnnotations { id name label score createdAt updatedAt }"


def traces_costs_query(project_gid: str, trace_ids: Sequence[str]) -> dict[str, Any]:
    """One request for the total cost and the own annotations of each of `trace_ids` (at most
    ALIASES_PER_QUERY of a page of the trace list)."""
    declared = "".join(f", $t{i}: ID!" for i in range(len(trace_ids)))
    fields = " ".join(
        f"t{i}: trace(traceId: $t{i}) {{ costSummary {{ total {{ cost }} }} {TRACE_ANNOTATIONS} }}"
        for i in range(len(trace_ids))
    )
    query = (
        f"query TracesCosts($project: ID!{declared}) "
        f"{{ node(id: $project) {{ ... on Project {{ {fields} }} }} }}"
    )
    variables: dict[str, Any] = {"project": project_gid}
    variables.update({f"t{i}": trace_id for i, trace_id in enumerate(trace_ids)})
    return {"query": query, "variables": variables}


def read_traces_costs(answer: Any, trace_ids: Sequence[str]) -> dict[str, float]:
    """Each trace's total cost by trace id, for the traces Phoenix has a cost for."""
    project = dig(answer, "data", "node")
    costs: dict[str, float] = {}
    for i, trace_id in enumerate(trace_ids):
        cost = to_float(dig(project, f"t{i}", "costSummary", "total", "cost"))
        if cost is not None:
            costs[trace_id] = cost
    return costs


def read_traces_annotations(answer: Any, trace_ids: Sequence[str]) -> dict[str, list[Any]]:
    """Each trace's own annotations (GraphQL's records, camelCase) by trace id, for the traces
    the answer holds."""
    project = dig(answer, "data", "node")
    found: dict[str, list[Any]] = {}
    for i, trace_id in enumerate(trace_ids):
        records = dig(project, f"t{i}", "traceAnnotations")
        if isinstance(records, list):
            found[trace_id] = [r for r in records if isinstance(r, Mapping)]
    return found


def graphql_errors(answer: Any) -> str | None:
    """The first error message of a GraphQL answer (they come with HTTP 200), if any."""
    errors = answer.get("errors") if isinstance(answer, Mapping) else None
    if isinstance(errors, list) and errors:
        first = errors[0]
        message = first.get("message") if isinstance(first, Mapping) else first
        return str(message) if message else "an error without a message"
    return None


def dig(value: Any, *keys: str) -> Any:
    """`value[keys[0]][keys[1]]...`, or None where a step is not a mapping."""
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value

"""A project's threshold alerts: list and create (the spec's), and the local service's
extensions: one alert with its state, its history of state changes and webhook attempts, a
test webhook, changes (any field, pause, mute), deletion and a new signing secret. A project
key manages its own project's alerts, as it creates them."""

import json
import threading
import time
from typing import Annotated, Any

from anyio import from_thread
from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from tui.server.alerts.metrics import parse_metric
from tui.server.alerts.payload import TEST, Evaluated, event_body
from tui.server.alerts.service import Alerts
from tui.server.alerts.signing import new_secret
from tui.server.alerts.targets import Refused, check_new_target
from tui.server.http.answers import (
    ERRORS,
    Alert,
    AlertEventList,
    AlertList,
    QueuedWebhook,
    RotatedSecret,
)
from tui.server.http.deps import (
    AlertsDep,
    Auth,
    ClockDep,
    ReadableProject,
    StoreDep,
    apply_once,
    create_once,
    readable_project,
    reply_to,
)
from tui.server.http.errors import ServiceError
from tui.server.http.paging import decode_cursor, encode_cursor
from tui.server.http.schemas import (
    AlertCreate,
    AlertUpdate,
    alert_json,
    event_json,
    iso_ms,
    parse_timestamp,
)
from tui.server.store.alert_rows import (
    AlertEventRow,
    AlertRow,
    AlertSecretRow,
    DeliveryRow,
    new_alert,
    new_event_id,
)
from tui.server.store.errors import TooManyAlerts
from tui.server.store.protocol import TraceStore
from tui.server.store.rows import Once, ProjectRow

MAX_LIMIT = 500
# After a rotation, webhooks carry signatures by both secrets this long: receivers move to the
# new secret within it, without a gap.
SECRET_GRACE_MS = 24 * 3_600_000
EVENT_CURSOR = {"s": int}  # the position of the last event of the page
# How long `POST .../test?wait=true` waits for the test event's first attempt to end: past it,
# the answer is the 202 of a plain test (the history shows the outcome when it comes).
TEST_WAIT_S = 10.0
TEST_POLL_S = 0.05
TEST_POLL_MAX_S = 0.5  # the poll's interval grows to this: a slow receiver costs few reads
# Waits run in the threadpool that serves every synchronous route: at most this many at once,
# so a burst of waited tests never starves the other requests; past it, a waited test answers
# the plain 202 at once (its outcome comes in the alert's history, as without `wait`).
MAX_TEST_WAITS = 4
_test_waits = threading.BoundedSemaphore(MAX_TEST_WAITS)

router = APIRouter(responses=ERRORS)


@router.get(
    "/projects/{project_id}/alerts", summary="List a project's alerts", response_model=AlertList
)
def list_alerts(project: ReadableProject, store: StoreDep) -> Response:
    states = store.alert_states(project.id)
    alerts = [alert_json(r, states.get(r.id)) for r in store.list_alerts(project.id)]
    return JSONResponse({"data": alerts})


@router.post(
    "/projects/{project_id}/alerts",
    status_code=201,
    summary="Create an alert",
    response_model=Alert,
)
def create_alert(
    request: Request,
    scope: Auth,
    store: StoreDep,
    alerts: AlertsDep,
    project_id: Annotated[str, Path()],
    payload: AlertCreate,
) -> Response:
    readable_project(store, scope, project_id)  # after the body's validation: see deps
    # After the key and the project: a stranger learns nothing from it, not even how a name
    # resolves.
    refuse_unreachable_target(alerts, payload.webhook_url)
    row = new_alert(project_id=project_id, **payload.model_dump())
    secret = AlertSecretRow(row.id, new_secret())
    # The secret is in this answer (and in its replay to the same Idempotency-Key), never again.
    body = alert_json(row, webhook_secret=secret.secret)
    try:
        return create_once(
            request,
            store,
            scope,
            payload,
            row,
            body,
            also=[secret],
            alerts_at_most=alerts.most_per_project,
        )
    except TooManyAlerts as full:
        raise too_many_alerts(full.most) from None


def too_many_alerts(most: int) -> ServiceError:
    """409 for an alert past its project's bound: the body is valid, the project is full, and
    the same request succeeds once one of its alerts is deleted."""
    return ServiceError(
        409,
        "too_many_alerts",
        f"This project has {most} alerts, as many as a project may have: delete one first.",
        [{"field": "project_id", "message": f"has {most} alerts, as many as a project may have"}],
    )


def refuse_unreachable_target(alerts: Alerts, webhook_url: str) -> None:
    """422 for a webhook URL every delivery would refuse (targets.check_new_target). Called
    from a route's worker thread: the check runs on the event loop, where resolvers run."""
    try:
        from_thread.run(check_new_target, webhook_url, alerts.resolve, alerts.allow_private)
    except Refused as refused:
        # The reason names the host or address at most, never the URL's path: it can be a
        # secret.
        reason = str(refused).removeprefix("refused: ")
        raise ServiceError(
            422,
            "validation_error",
            f"The webhook URL is refused: {reason}.",
            [{"field": "webhook_url", "message": f"refused: {reason}"}],
        ) from None


def alert_in(store: TraceStore, project: ProjectRow, alert_id: str) -> AlertRow:
    alert = store.get_alert(alert_id)
    if alert is None or alert.project_id != project.id:
        # The id is not repeated: whatever a client sends in its place (a key pasted in the
        # wrong field, say) must not come back in an answer or a log line.
        raise ServiceError(404, "not_found", "No alert with that id in this project.")
    return alert


@router.get(
    "/projects/{project_id}/alerts/{alert_id}",
    summary="Get one alert and its state",
    response_model=Alert,
)
def get_alert(
    project: ReadableProject, store: StoreDep, alert_id: Annotated[str, Path()]
) -> Response:
    alert = alert_in(store, project, alert_id)
    return JSONResponse(alert_json(alert, store.alert_states(project.id).get(alert.id)))


@router.get(
    "/projects/{project_id}/alerts/{alert_id}/events",
    summary="List an alert's state changes and webhook attempts, newest first",
    response_model=AlertEventList,
)
def list_events(
    project: ReadableProject,
    store: StoreDep,
    alert_id: Annotated[str, Path()],
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    cursor: Annotated[str | None, Query()] = None,
) -> Response:
    alert = alert_in(store, project, alert_id)
    before = decode_cursor(cursor, EVENT_CURSOR)["s"] if cursor else None
    rows, more = store.list_alert_events(alert.id, limit, before)
    next_cursor = encode_cursor({"s": rows[-1][0]}) if more and rows else None
    return JSONResponse(
        {
            "data": [event_json(event) for _, event in rows],
            "next_cursor": next_cursor,
            "has_more": more,
        }
    )


class FirstAttempt(BaseModel):
    """Extension (`?wait=true`): how the receiver answered the test event's first attempt."""

    webhook_id: str
    delivered: bool
    status_code: int | None = None
    latency_ms: int | None = None
    error: str | None = None


@router.post(
    "/projects/{project_id}/alerts/{alert_id}/test",
    status_code=202,
    summary="Send the alert's webhook a test event now",
    description="Queues the event (202). With `wait=true` (an extension) the answer waits for "
    "the event's first attempt, at most 10 s, and says how the receiver answered (200): its "
    "status code and latency, or the error; past 10 s, or at once while 4 waited tests are "
    "waiting on this replica, it is the 202 of a plain test.",
    response_model=QueuedWebhook,
    responses={200: {"model": FirstAttempt, "description": "The first attempt's outcome"}},
)
def send_test(
    request: Request,
    scope: Auth,
    project: ReadableProject,
    store: StoreDep,
    clock: ClockDep,
    alerts: AlertsDep,
    alert_id: Annotated[str, Path()],
    wait: Annotated[bool, Query(description="Wait for the first attempt (extension)")] = False,
) -> Response:
    alert = alert_in(store, project, alert_id)
    now = clock()
    state = store.alert_states(project.id).get(alert.id)
    evaluated_at = state.last_evaluated_at if state and state.last_evaluated_at else now
    try:
        period_ms = parse_metric(alert.metric).period_ms
    except ValueError:  # a metric this service would not accept now: no window to show
        period_ms = 0
    value = state.last_value if state else None
    evaluated = Evaluated(value, evaluated_at - period_ms, evaluated_at, evaluated_at)
    body = event_body(TEST, alert, project, evaluated, state.state if state else "no_data", [], now)
    row = DeliveryRow(new_event_id("msg"), alert.id, TEST, body, now, 0, now)
    answer = create_once(
        request, store, scope, {"test": alert.id}, row, {"webhook_id": row.id}, status=202
    )
    alerts.wake()
    if not wait or answer.status_code != 202:
        return answer
    # A replay of the same Idempotency-Key names the first request's event: that one's outcome.
    webhook_id = json.loads(bytes(answer.body)).get("webhook_id", row.id)
    if not _test_waits.acquire(blocking=False):
        return answer  # enough threads are waiting already
    try:
        outcome = first_attempt(store, alert.id, webhook_id, time.monotonic() + TEST_WAIT_S)
    finally:
        _test_waits.release()
    return answer if outcome is None else JSONResponse(outcome.model_dump())


def first_attempt(
    store: TraceStore, alert_id: str, webhook_id: str, deadline: float
) -> FirstAttempt | None:
    """The outcome of the delivery's first attempt once it is recorded (by whichever replica
    made it: the store is what they share); None if it is not by `deadline` (monotonic). In
    the route's worker thread: the wait blocks that thread only."""
    interval = TEST_POLL_S
    while True:
        delivery = store.get_delivery(webhook_id)
        if delivery is not None and delivery.attempts >= 1:
            event = attempt_event(store, alert_id, webhook_id)
            if event is not None:
                return FirstAttempt(
                    webhook_id=webhook_id,
                    delivered=bool(event.ok),
                    status_code=event.status_code,
                    latency_ms=event.duration_ms,
                    error=event.error,
                )
        if time.monotonic() >= deadline:
            return None
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
        interval = min(interval * 2, TEST_POLL_MAX_S)


def attempt_event(store: TraceStore, alert_id: str, webhook_id: str) -> AlertEventRow | None:
    """The history's record of the delivery's first attempt (among the newest events)."""
    rows, _ = store.list_alert_events(alert_id, 200)
    for _, event in rows:
        if event.kind == "delivery" and event.webhook_id == webhook_id and event.attempt == 1:
            return event
    return None


@router.patch(
    "/projects/{project_id}/alerts/{alert_id}",
    summary="Change an alert: any field, pause or resume it, mute it until a time",
    response_model=Alert,
)
def update_alert(
    request: Request,
    scope: Auth,
    store: StoreDep,
    alerts: AlertsDep,
    project_id: Annotated[str, Path()],
    alert_id: Annotated[str, Path()],
    payload: AlertUpdate,
) -> Response:
    project = readable_project(store, scope, project_id)  # after the body's validation
    alert = alert_in(store, project, alert_id)
    changes = payload.changes()
    if "webhook_url" in changes and changes["webhook_url"] != alert.webhook_url:
        refuse_unreachable_target(alerts, changes["webhook_url"])
    if "muted_until" in changes:
        muted = changes["muted_until"]
        changes["muted_until"] = None if muted is None else parse_timestamp(muted)
    changed = alert._replace(**changes)

    def change(once: Once | None) -> tuple[int, dict[str, Any]]:
        body = alert_json(changed, store.alert_states(project.id).get(alert.id))
        store.update_alert(changed, reply_to(once, 200, body))
        return 200, body

    return apply_once(request, store, scope, {"patch": payload.changes()}, change)


@router.delete(
    "/projects/{project_id}/alerts/{alert_id}",
    status_code=204,
    summary="Delete an alert with its history and pending webhooks",
)
def delete_alert(
    request: Request,
    scope: Auth,
    store: StoreDep,
    project_id: Annotated[str, Path()],
    alert_id: Annotated[str, Path()],
) -> Response:
    def delete(once: Once | None) -> tuple[int, None]:
        # In here: a repeat of a deletion answers as the first did, though the alert is gone.
        alert = alert_in(store, readable_project(store, scope, project_id), alert_id)
        if not store.delete_alert(alert.id, reply_to(once, 204, None)):
            raise ServiceError(404, "not_found", "No alert with that id in this project.")
        return 204, None

    return apply_once(request, store, scope, {"delete": alert_id}, delete)


@router.post(
    "/projects/{project_id}/alerts/{alert_id}/rotate-secret",
    summary="Give the alert a new webhook secret; the previous one signs too for 24 hours",
    response_model=RotatedSecret,
)
def rotate_secret(
    request: Request,
    scope: Auth,
    project: ReadableProject,
    store: StoreDep,
    clock: ClockDep,
    alert_id: Annotated[str, Path()],
) -> Response:
    alert = alert_in(store, project, alert_id)

    def rotate(once: Once | None) -> tuple[int, dict[str, Any]]:
        secret = new_secret()
        valid_until = clock() + SECRET_GRACE_MS
        # The secret is in this answer (and its replay to the same Idempotency-Key) only.
        body = RotatedSecret(secret=secret, previous_valid_until=iso_ms(valid_until)).model_dump()
        if not store.rotate_secret(alert.id, secret, valid_until, reply_to(once, 200, body)):
            raise ServiceError(404, "not_found", "No alert with that id in this project.")
        return 200, body

    return apply_once(request, store, scope, {"rotate": alert.id}, rotate)

"""The outside review's rotation race (issue 39, point 5), repeated against real `tracetui
serve` processes: in each trial, N threads send `POST .../rotate-secret` under one
Idempotency-Key at the same moment (a barrier), to one replica or alternately to two replicas on
one database. The review saw two rotations in 8 of 20 trials on PostgreSQL, and a replay
answering a secret that was no longer the alert's.

    .venv/bin/python -m tests.perf.rotate_attack --store postgres --trials 20 --repeats 8

Per trial, from the store after the answers: whether the alert was rotated once (its previous
secret is the one it was created with: a second rotation would have made the first rotation's
secret the previous one), how many distinct secrets were answered, and whether every answer
equals the stored secret.
"""

from __future__ import annotations

import argparse
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import httpx

from tests.perf.attack_service import Serve, add_workspace_key, store_url, uptime

ANSWER_LIMIT_S = 30.0


def trial(
    clients: list[httpx.Client], project: str, repeats: int, number: int, store: Any
) -> dict[str, Any]:
    api = clients[0]
    created = api.post(
        f"projects/{project}/alerts",
        json={
            "name": f"rotate {number}",
            "metric": "latency_ms_5m",
            "condition": "gt",
            "threshold": 1000,
            "webhook_url": "https://hooks.example.com/rotate",
        },
    )
    assert created.status_code == 201, created.text
    alert = created.json()
    path = f"projects/{project}/alerts/{alert['id']}/rotate-secret"
    together = threading.Barrier(repeats)

    def rotate(n: int) -> httpx.Response:
        together.wait(ANSWER_LIMIT_S)
        return clients[n % len(clients)].post(path, headers={"Idempotency-Key": f"rot-{number}"})

    with ThreadPoolExecutor(repeats) as pool:
        answers = list(pool.map(rotate, range(repeats)))
    stored = store.alert_secret(alert["id"])
    secrets = {a.json()["secret"] for a in answers if a.status_code == 200}
    return {
        "statuses": sorted({a.status_code for a in answers}),
        "rotated once": stored.previous_secret == alert["webhook_secret"],
        "secrets answered": len(secrets),
        "answers equal stored": secrets == {stored.secret},
        "replayed": sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers),
    }


def run(url: str, replicas: int, trials: int, repeats: int) -> None:
    from tui.server.store.opening import open_store

    key = add_workspace_key(url)
    store: Any = open_store(url)
    with ExitStack() as stack:
        served = [
            stack.enter_context(Serve(url, "--rate-limit", "100000")) for _ in range(replicas)
        ]
        clients = [
            stack.enter_context(
                httpx.Client(
                    base_url=s.base,
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=ANSWER_LIMIT_S,
                )
            )
            for s in served
        ]
        made = clients[0].post("projects", json={"name": f"rotations-{replicas}"})
        assert made.status_code == 201, made.text
        results = [trial(clients, made.json()["id"], repeats, n, store) for n in range(trials)]
    store.close()
    twice = sum(not r["rotated once"] for r in results)
    unequal = sum(not r["answers equal stored"] for r in results)
    statuses = sorted({s for r in results for s in r["statuses"]})
    replayed = sorted({r["replayed"] for r in results})
    print(
        f"{replicas} replica(s), {trials} trials of {repeats} repeats: rotated more than once in"
        f" {twice}, an answer unequal to the stored secret in {unequal}; statuses {statuses},"
        f" replayed answers per trial {replayed}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="postgres")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=8)
    args = parser.parse_args()
    print("before:", uptime())
    with store_url(args.store) as url:
        for replicas in (1, 2):
            run(url, replicas, args.trials, args.repeats)
    print("after: ", uptime())


if __name__ == "__main__":
    main()

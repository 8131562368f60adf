"""The outside review's text-search attack (issue 39, point 1), repeated against a real
`tracetui serve` on either store; prints what another project sees while it runs, and how long
abandoned searches go on.

    .venv/bin/python -m tests.perf.search_attack --store postgres
    .venv/bin/python -m tests.perf.search_attack --store sqlite --attackers 40
    .venv/bin/python -m tests.perf.search_attack --attacker-keys 2 --victim-searches

The attacker's project holds TRACES traces whose text is made to be slow to search (runs of
"a" broken by a "b"); the attacker's key sends `--attackers` searches at once, in a loop, each
given up after `--give-up` seconds (the review's clients gave up after 1 s), for `--seconds`.
Meanwhile another project's key asks for its trace list (PostgreSQL: GET /v1/traces) or the
project list (SQLite: GET /v1/projects) ten times a second, and its answers' statuses and times
are kept. On PostgreSQL, pg_stat_activity is sampled every 50 ms: how long each search statement
lived, and how long after the attack's end the last one ended. On SQLite, the service's CPU time
says when its searches stopped working.

`--attacker-keys` gives the attacker's project more keys (its searches spread over them: each
key has its own searches under way), and `--victim-searches` makes the other project search its
own traces (q=hello) instead of listing, to see what the replica's bound on searches in all
leaves it.

Not a bench module (make bench does not run it): it measures a refusal of service, not a speed.
The word is the longest `q` takes (64 characters) unless `--word-length` says otherwise (the
review's 498 for a service from before the bound).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

TRACES = 2_000
# A text of 8,000 characters made slow for each store's matching of the longest word `q` takes:
# SQLite's FTS5 needs every trigram of the word in the text (runs of "a" broken by a "b");
# PostgreSQL's strpos compares the word backwards from its end ("b" then "a"s, over "a"s), as its
# ILIKE compared forwards ("a"s then "b"), at every position.
TEXTS = {"runs": ("a" * 61 + "b") * 129, "a": "a" * 7999}
NOW_MS = int(time.time() * 1000)
COUNTING = threading.Lock()  # the attackers' threads share one count of answers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fill(url: str, text: str) -> tuple[str, str]:
    """The attacker's project (TRACES slow texts) and the victim's (100 short ones), each
    with a key of its own; returns the two keys."""
    from tui.server.api_keys import new_api_key
    from tui.server.store.opening import open_store
    from tui.server.store.rows import TraceRow

    store: Any = open_store(url)
    keys = new_api_key("pk"), new_api_key("pk")
    with store.transaction() as db:
        for project in ("attacker", "victim"):
            store.insert_project(db, project, None, 30, project_id=project)
        for project, count, body in (("attacker", TRACES, text), ("victim", 100, "hello")):
            rows = []
            for n in range(count):
                at = NOW_MS - n * 1000
                fields = (f"{n:032x}", project, "t", at, 1, 1, 0, 0, 0.0, "ok", 0, "{}", at)
                rows.append(TraceRow(*fields, None, None, None, "[]", None, "[]"))
            store.insert_traces(db, rows, texts=[(project, r.id, body) for r in rows])
    store.add_key(keys[0], "attacker", "attacker")
    store.add_key(keys[1], "victim", "victim")
    store.close()
    return keys


def more_key(url: str) -> str:
    """Another key of the attacker's project."""
    from tui.server.api_keys import new_api_key
    from tui.server.store.opening import open_store

    store: Any = open_store(url)
    key = new_api_key("pk")
    try:
        store.add_key(key, "attacker", "attacker")
    finally:
        store.close()
    return key


class Victim(threading.Thread):
    """Another project's requests, ten a second: (seconds since start, status, seconds)."""

    def __init__(self, base: str, key: str, path: str, params: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.client = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60
        )
        self.path, self.params = path, params
        self.answers: list[tuple[float, int, float]] = []
        self.stop = threading.Event()
        self.started = time.monotonic()

    def run(self) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                status = self.client.get(self.path, params=self.params).status_code
            except httpx.HTTPError:
                status = 0
            self.answers.append((began - self.started, status, time.monotonic() - began))
            self.stop.wait(max(0.0, 0.1 - (time.monotonic() - began)))


def attack(base: str, key: str, word: str, give_up: float, until: float, counts: dict) -> None:
    """One attacker: the search again and again until `until`, each given up after `give_up`
    seconds; an answer that comes at once (a refusal) is followed by a 0.1 s pause."""
    params = {"project_id": "attacker", "q": word, "from": "2000-01-01T00:00:00Z"}
    with httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=give_up
    ) as client:
        while time.monotonic() < until:
            try:
                kind = answer_kind(client.get("traces", params=params))
                with COUNTING:
                    counts[kind] = counts.get(kind, 0) + 1
                time.sleep(0.1)
            except httpx.TimeoutException:
                with COUNTING:
                    counts["gave up"] = counts.get("gave up", 0) + 1


def answer_kind(answer: httpx.Response) -> str:
    """The status and, for an error, its code: a 429 may be the key's rate limit
    (rate_limited) or its searches under way (too_many_searches)."""
    if answer.status_code < 400:
        return str(answer.status_code)
    try:
        return f"{answer.status_code} {answer.json()['error']['code']}"
    except (ValueError, KeyError, TypeError):
        return str(answer.status_code)


def statements(url: str, marker: str, lives: dict, stop: threading.Event) -> None:
    """PostgreSQL: every 50 ms, the search statements running: (pid, start) -> (first, last
    seen, monotonic)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as watcher:
        while not stop.is_set():
            now = time.monotonic()
            rows = watcher.execute(
                "SELECT pid, query_start FROM pg_stat_activity WHERE state = 'active'"
                " AND pid <> pg_backend_pid() AND position(%s in query) > 0",
                (marker,),
            ).fetchall()
            for pid, start in rows:
                first, _ = lives.get((pid, start), (now, now))
                lives[(pid, start)] = (first, now)
            stop.wait(0.05)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary(answers: list[tuple[float, int, float]], since: float, until: float) -> str:
    during = [(s, t) for at, s, t in answers if since <= at <= until]
    if not during:
        return "no answers"
    times = sorted(t * 1000 for _, t in during)
    bad = sum(1 for s, _ in during if s != 200)
    return (
        f"{len(during)} answers, p50 {statistics.median(times):.0f} ms, max {times[-1]:.0f} ms, "
        f"{bad} not 200 ({sorted({s for s, _ in during if s != 200})})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="postgres")
    parser.add_argument("--attackers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--give-up", type=float, default=1.0)
    parser.add_argument("--word-length", type=int, default=64)
    parser.add_argument(
        "--attacker-keys", type=int, default=1, help="keys of the attacker's project (1)"
    )
    parser.add_argument(
        "--victim-searches",
        action="store_true",
        help="the other project searches its traces (q=hello) instead of listing",
    )
    parser.add_argument(
        "--rate-limit",
        type=int,
        help="serve's --rate-limit (default: serve's, 1000 a minute per key); a high one lets"
        " every search reach the search bounds instead of the key's rate limit",
    )
    parser.add_argument(
        "--word-starts", choices=("a", "b"), help="(default: b on PostgreSQL up to 64, else a)"
    )
    parser.add_argument(
        "--text", choices=sorted(TEXTS), help="(default: a on PostgreSQL, runs on SQLite)"
    )
    args = parser.parse_args()
    postgres = args.store == "postgres"
    starts = args.word_starts or ("b" if postgres and args.word_length <= 64 else "a")
    word = "b" + "a" * (args.word_length - 1) if starts == "b" else "a" * (args.word_length - 1)
    word = word if starts == "b" else word + "b"
    text = TEXTS[args.text or ("a" if postgres else "runs")]
    server = None
    folder = Path(tempfile.mkdtemp(prefix="tracetui-attack-"))
    if args.store == "postgres":
        from tests.support.postgres import start_postgres

        server = start_postgres()
        url = server.socket_url(server.create_database())
    else:
        url = str(folder / "attack.sqlite3")
    try:
        attacker_key, victim_key = fill(url, text)
        # More keys of the attacker's own project: each key has its own searches under way.
        attacker_keys = [attacker_key] + [
            more_key(url) for _ in range(max(0, args.attacker_keys - 1))
        ]
        port = free_port()
        served = subprocess.Popen(
            [sys.executable, "-m", "tui", "serve", "--db", url, "--port", str(port)]
            + (["--rate-limit", str(args.rate_limit)] if args.rate_limit else []),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TRACETUI_ALERT_INTERVAL": "0"},
        )
        base = f"http://127.0.0.1:{port}/v1/"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "projects", timeout=1)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.2)
        if args.victim_searches:
            victim = Victim(base, victim_key, "traces", {"project_id": "victim", "q": "hello"})
        elif args.store == "postgres":
            victim = Victim(base, victim_key, "traces", {"project_id": "victim"})
        else:
            victim = Victim(base, victim_key, "projects", {})
        lives: dict = {}
        watching = threading.Event()
        if args.store == "postgres":
            marker = "strpos(lower(search_text)" if args.word_length <= 64 else "ILIKE"
            threading.Thread(
                target=statements, args=(url, marker, lives, watching), daemon=True
            ).start()
        victim.start()
        time.sleep(3)  # the victim's answers before the attack
        attack_start = time.monotonic() - victim.started
        until = time.monotonic() + args.seconds
        counts: dict = {}
        attackers = [
            threading.Thread(
                target=attack,
                args=(
                    base,
                    attacker_keys[n % len(attacker_keys)],
                    word,
                    args.give_up,
                    until,
                    counts,
                ),
            )
            for n in range(args.attackers)
        ]
        cpu_before = cpu_seconds(served.pid)
        for thread in attackers:
            thread.start()
        for thread in attackers:
            thread.join()
        attack_end = time.monotonic() - victim.started
        ended = time.monotonic()
        # After the attack: until the service is idle again (no statement; CPU at rest).
        idle_after = None
        last_cpu, last_at = cpu_seconds(served.pid), time.monotonic()
        while time.monotonic() - ended < 120:
            time.sleep(0.25)
            cpu, at = cpu_seconds(served.pid), time.monotonic()
            busy = (cpu - last_cpu) / (at - last_at) > 0.15
            running = any(last >= at - 0.3 for _, last in lives.values())
            last_cpu, last_at = cpu, at
            if not busy and not running:
                idle_after = at - ended
                break
        time.sleep(2)
        victim.stop.set()
        victim.join()
        watching.set()
        print(
            f"store {args.store}, {TRACES} traces of text {text[:3]!r}..., word of {len(word)}"
            f" starting {starts!r}, "
            f"{args.attackers} attackers giving up after {args.give_up} s, {args.seconds} s"
        )
        print(f"attacker's answers: {dict(sorted(counts.items()))}")
        print(
            f"attacker's keys: {len(attacker_keys)}; the other project: {victim.path} {victim.params}"
        )
        print("victim before:", summary(victim.answers, 0, attack_start))
        print("victim during:", summary(victim.answers, attack_start, attack_end))
        print("victim after: ", summary(victim.answers, attack_end, 10**9))
        print(
            f"service busy for {idle_after if idle_after is None else round(idle_after, 2)} s"
            " after the attack's end"
        )
        print(f"service CPU during the attack: {cpu_seconds(served.pid) - cpu_before:.1f} s")
        if lives:
            durations = sorted(last - first for first, last in lives.values())
            print(
                f"search statements: {len(durations)}, lived p50 {statistics.median(durations):.2f}"
                f" s, max {durations[-1]:.2f} s; the last ended "
                f"{max(last for _, last in lives.values()) - ended:.2f} s after the attack's end"
            )
        served.terminate()
        served.wait(30)
    finally:
        if server is not None:
            server.close()


if __name__ == "__main__":
    main()

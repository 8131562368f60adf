"""Processes as Linux's /proc tells them: children, process groups, liveness and state, where
they wait in the kernel, CPU time and peak memory. Used by the tests and benchmarks of the
service's ingest worker processes."""

from __future__ import annotations

import os
import re
from pathlib import Path


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (which, in parentheses, may hold
    spaces): state first, then the parent's pid. Raises OSError for a process that is gone."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()


def children_of(pid: int) -> set[int]:
    """The live processes whose parent is `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = _stat_fields(int(entry.name))
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def workers_of(pid: int) -> set[int]:
    """The children of `pid` that multiprocessing spawned as workers (not its resource
    tracker, which is a child too)."""
    found = set()
    for child in children_of(pid):
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.add(child)
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    try:
        return _stat_fields(pid)[0] != "Z"
    except OSError:
        return False


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far."""
    fields = _stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_kb(pid: int) -> int:
    """The process's peak resident memory (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    assert found is not None, status
    return int(found[1])


def ignores(pid: int, signum: int) -> bool:
    """Whether the process has set `signum` to be ignored (SigIgn in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    found = re.search(r"SigIgn:\s+([0-9a-f]+)", status)
    return found is not None and bool(int(found[1], 16) >> (signum - 1) & 1)


def state(pid: int) -> str | None:
    """The process's state letter (R running, S sleeping, T stopped, Z zombie...), None if
    it is gone."""
    try:
        return _stat_fields(pid)[0]
    except OSError:
        return None


def in_group(pgid: int) -> set[int]:
    """The live processes (zombies aside) of process group `pgid`: a service started in a
    session of its own, its workers and multiprocessing's resource tracker."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = _stat_fields(int(entry.name))
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def wait_channel(pid: int) -> str:
    """Where in the kernel the process's main thread is blocked, as `ps -o wchan` shows it
    (a pipe's read, a futex), or "" if it is gone or running."""
    try:
        channel = Path(f"/proc/{pid}/task/{pid}/wchan").read_text().strip()
    except OSError:
        return ""
    return "" if channel == "0" else channel


def reading_a_pipe(pid: int) -> bool:
    """Whether the process's main thread is blocked reading a pipe. An idle ingest worker
    waiting for a body does so holding the lock of the pool's call queue; the other idle ones
    wait for that lock (a futex)."""
    return "pipe" in wait_channel(pid)

"""The Vercel AI SDK emitter's node_modules: `npm ci` from the committed package.json and
package-lock.json in tests/emitters/vercel, installed once into a cache folder named by their
hash (~/.cache/tracetui/npm-vercel-<hash>, or $TRACETUI_NPM_CACHE/npm-vercel-<hash>), so a change
of either file installs afresh and the same files never install twice.

The install runs under a file lock (parallel xdist workers install once) and is marked done only
when npm is: an install cut short never counts, and is started over. Without node or npm, or when
npm fails, the tests that need it fail with the reason: they are never skipped silently.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

VERCEL = Path(__file__).parent / "vercel"
INSTALLED_MARKER = ".tracetui-installed"
INSTALL_SECONDS = 600.0  # a cold install downloads ~25 packages; slow under load


class NodeUnavailable(RuntimeError):
    """node or npm is missing, or `npm ci` failed: the message says which and why."""


def package_hash(folder: Path = VERCEL) -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:16]


def install_dir(folder: Path = VERCEL) -> Path:
    configured = os.environ.get("TRACETUI_NPM_CACHE")
    cache = (
        Path(configured)
        if configured
        else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tracetui"
    )
    return cache / f"npm-{folder.name}-{package_hash(folder)}"


def node_executable() -> str:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        raise NodeUnavailable(
            "node and npm are needed to run the Vercel AI SDK emitter (tests/emitters/vercel); "
            "install Node.js 20 or later with npm and run the tests again"
        )
    return node


def ensure_installed(folder: Path = VERCEL) -> Path:
    """The cached folder with `folder`'s dependencies installed (node_modules), installed
    first if they are not there."""
    node_executable()
    target = install_dir(folder)
    if (target / INSTALLED_MARKER).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing it: wait for it
        if not (target / INSTALLED_MARKER).exists():
            _install(folder, target)
    return target


def _install(folder: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)  # what an install cut short left
    target.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(folder / name, target / name)
    step = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"]
    try:
        done = subprocess.run(
            step, cwd=target, capture_output=True, text=True, timeout=INSTALL_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        raise NodeUnavailable(f"`npm ci` in {target} took over {INSTALL_SECONDS:.0f} s") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-2000:]
        raise NodeUnavailable(f"`npm ci` failed in {target}: {tail}")
    (target / INSTALLED_MARKER).write_text(package_hash(folder) + "\n")


def script_beside_modules(installed: Path, script: str, where: Path) -> Path:
    """`script` of tests/emitters/vercel copied into `where` beside a link to the installed
    node_modules: node resolves an ES module's imports from the script's own folder."""
    where.mkdir(parents=True, exist_ok=True)
    link = where / "node_modules"
    if not link.exists():
        link.symlink_to(installed / "node_modules", target_is_directory=True)
    shutil.copyfile(VERCEL / script, where / script)
    return where / script

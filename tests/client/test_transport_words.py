"""A failure to reach a server reads as a sentence (tui/api/errors.py): connection refused, a
name DNS does not know, a TLS certificate refused or a TLS handshake with a plain-HTTP port, no
answer in time; never an exception's class name. The command line says the same sentences
without loading Textual, and a message that merely ends in a name in parentheses is left as it
is (it was once turned into "the network connection failed")."""

from __future__ import annotations

import errno
import os
import socket
import ssl
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.client.hostile_servers import LoopbackServer, closed_port, plain_http
from tests.support.helpers import mock_client
from tui.api import ApiClient, ApiError, ConnectionFailed, TimedOut
from tui.api.errors import transport_sentence

CLASS_NAMES = ("ConnectError", "ConnectTimeout", "ReadTimeout", "SSLError", "gaierror")


def raising(error: Exception) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    return handler


def caused_by(cause: BaseException, outer: type[httpx.TransportError]) -> httpx.TransportError:
    """An httpx error raised from `cause`, as httpx raises one from the socket's own error."""
    error = outer(str(cause))
    error.__cause__ = cause
    return error


async def failure_of(error: Exception) -> ApiError:
    async with mock_client(raising(error), max_retries=0) as client:
        with pytest.raises(ApiError) as caught:
            await client.list_projects()
    assert not any(name in caught.value.message for name in CLASS_NAMES), caught.value.message
    return caught.value


async def test_a_port_nobody_listens_on_reads_as_connection_refused() -> None:
    async with ApiClient(f"http://127.0.0.1:{closed_port()}/v1", max_retries=0) as client:
        with pytest.raises(ConnectionFailed) as caught:
            await client.list_projects()
    message = caught.value.message
    assert "connection refused" in message and "is the service running" in message, message
    assert "ConnectError" not in message and "Errno" not in message
    assert client.log[-1].error == message  # the API log says the same words


async def test_https_to_a_plain_http_port_reads_as_a_tls_handshake_failure() -> None:
    with LoopbackServer(plain_http) as server:
        url = f"https://127.0.0.1:{server.port}/v1"
        async with ApiClient(url, max_retries=0) as client:
            with pytest.raises(ConnectionFailed) as caught:
                await client.list_projects()
    assert "TLS handshake failed" in caught.value.message, caught.value.message
    assert "https://" in caught.value.message


async def test_a_name_dns_does_not_know() -> None:
    gaierror = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    error = await failure_of(caused_by(gaierror, httpx.ConnectError))
    assert isinstance(error, ConnectionFailed)
    assert "host name could not be found (DNS)" in error.message


async def test_a_refused_certificate_says_why() -> None:
    refused = ssl.SSLCertVerificationError(1, "certificate verify failed")
    refused.verify_message = "self-signed certificate"
    error = await failure_of(caused_by(refused, httpx.ConnectError))
    assert "TLS certificate was refused (self-signed certificate)" in error.message


async def test_no_route_and_a_reset_connection() -> None:
    unreachable = OSError(errno.ENETUNREACH, "Network is unreachable")
    error = await failure_of(caused_by(unreachable, httpx.ConnectError))
    assert "no network route leads there" in error.message
    reset = ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
    error = await failure_of(caused_by(reset, httpx.ReadError))
    assert "failed mid-request: the server reset the connection" in error.message


@pytest.mark.parametrize(
    ("error", "kind", "words"),
    [
        (httpx.ConnectError("x"), ConnectionFailed, "nothing answered there"),
        (httpx.ConnectTimeout("x"), ConnectionFailed, "not accepted in time"),
        (httpx.ReadTimeout("x"), TimedOut, "did not answer in time: it took too long"),
        (httpx.RemoteProtocolError("x"), ConnectionFailed, "without a full answer"),
        (httpx.ProxyError("x"), ConnectionFailed, "the proxy refused"),
    ],
)
async def test_each_of_httpx_failures_without_a_cause_has_its_words(
    error: Exception, kind: type[ApiError], words: str
) -> None:
    failure = await failure_of(error)
    assert type(failure) is kind and words in failure.message, failure.message


def test_a_chain_that_loops_ends() -> None:
    first, second = httpx.ConnectError("a"), OSError("b")
    first.__cause__, second.__cause__ = second, first
    assert transport_sentence(first).startswith("nothing answered there")


# -- the command line ------------------------------------------------------------------------------

RUN_AND_LIST_TEXTUAL = (
    "import sys\n"
    "from tui.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))\n"
    "sys.exit(code)\n"
)


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }
    for name in ("TRACETUI_BASE_URL", "TRACETUI_API_KEY", "TRACETUI_PROFILE"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_TEXTUAL, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_command_line_words_a_refused_connection_without_loading_textual(
    tmp_path: Path,
) -> None:
    """An address that is not the spec's and that nothing answers: said in words, and why it
    could not be asked whether it is a Phoenix."""
    result = run_cli("--base-url", f"http://127.0.0.1:{closed_port()}", home=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "must end in /v1" in result.stderr
    assert "Nor could it be asked whether it is a Phoenix" in result.stderr
    assert "connection refused" in result.stderr and "ConnectError" not in result.stderr
    assert result.stdout.strip() == "[]", result.stdout  # Textual never loaded


def test_a_key_command_that_cannot_run_is_not_called_a_network_failure(tmp_path: Path) -> None:
    config = tmp_path / ".config" / "tracetui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        '[profiles.default]\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_command = "no-such-command-for-tracetui"\n'
    )
    config.chmod(0o600)
    result = run_cli(home=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "could not run" in result.stderr and "network" not in result.stderr, result.stderr
    assert result.stdout.strip() == "[]", result.stdout

"""The webhook SSRF guard sees through every IPv6 form that carries an IPv4 address: the cloud
metadata address is refused in each of them even with --allow-private-webhooks, and a private
or loopback IPv4 address written as IPv6 is judged as what it reaches."""

from __future__ import annotations

import asyncio
import ipaddress

import pytest

from tui.server.alerts.targets import Refused, address_kind, embedded_ipv4, resolve_target

# 169.254.169.254 written in every IPv6 form that reaches it.
METADATA_FORMS = [
    "::ffff:169.254.169.254",  # IPv4-mapped
    "::ffff:0:a9fe:a9fe",  # IPv4-translated (SIIT)
    "::169.254.169.254",  # IPv4-compatible
    "2002:a9fe:a9fe::1",  # 6to4
    "2001:0:4136:e378:8000:63bf:5601:5601",  # Teredo (client 169.254.169.254)
    "64:ff9b::169.254.169.254",  # NAT64, the well-known prefix
    "64:ff9b:1::a9fe:a9fe",  # NAT64, the local-use prefix
]


@pytest.mark.parametrize("address", METADATA_FORMS)
def test_the_metadata_address_is_refused_in_every_ipv6_form(address: str) -> None:
    async def resolve(host: str, port: int) -> list[str]:
        return [address]

    for url in (f"http://[{address}]/hook", "http://hooks.acme.io/hook"):
        with pytest.raises(Refused, match="cloud metadata"):
            asyncio.run(resolve_target(url, resolve, allow_private=True))
    assert ipaddress.IPv4Address("169.254.169.254") in embedded_ipv4(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("64:ff9b::127.0.0.1", "loopback"),
        ("64:ff9b::10.1.2.3", "private"),
        ("64:ff9b:1::c0a8:101", "private"),  # 192.168.1.1
        ("::127.0.0.1", "loopback"),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),  # Teredo client 127.0.0.1
        ("64:ff9b::93.184.215.14", None),  # a public address through NAT64 stays public
    ],
)
def test_private_ipv4_behind_nat64_compatible_and_teredo_forms(
    address: str, kind: str | None
) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


def test_plain_ipv6_addresses_carry_no_ipv4() -> None:
    for address in ("2606:4700::1111", "::1", "::", "fe80::1"):
        assert embedded_ipv4(ipaddress.ip_address(address)) == []

"""Issue 33: which names a grant covers and which addresses the sandbox's proxy refuses, checked without a network
(the refusals' effect on real listeners is tests/test_sandbox_network.py's)."""

from __future__ import annotations

import ipaddress

import pytest

from tui_agent.core.hostnames import check_names, describe_grant, name_granted
from tui_agent.core.network.policy import TEST_PUBLIC_NETS_ENV, NetPolicy, Refused
from tui_agent.core.settings import ConfigError, settings_from_text


def test_wildcards_cover_names_below_never_the_name_itself_or_a_lookalike() -> None:
    grant = check_names(["*.Example.com.", "files.example.org"], "NETWORK")
    assert grant == ("*.example.com", "files.example.org")
    assert name_granted("a.example.com", grant) and name_granted("a.b.EXAMPLE.com.", grant)
    assert not name_granted("example.com", grant) and not name_granted("evilexample.com", grant)
    assert name_granted("files.example.org", grant) and not name_granted("x.files.example.org", grant)
    assert not name_granted("anything", False) and name_granted("anything", True)
    assert describe_grant(grant) == "only *.example.com, files.example.org"


@pytest.mark.parametrize("bad", [["http://x.org"], ["a b"], ["*"], ["-a.org"], [""], [3], "x.org", {"x": 1}])
def test_a_malformed_list_is_one_clear_line(bad: object) -> None:
    with pytest.raises(ValueError) as info:
        check_names(bad, "NETWORK")
    assert "\n" not in str(info.value) and "NETWORK" in str(info.value)


def test_a_malformed_sandbox_network_setting_is_one_clear_line() -> None:
    assert settings_from_text('[sandbox]\nnetwork = ["pypi.org"]\n').sandbox_network == ("pypi.org",)
    with pytest.raises(ConfigError, match=r"config.toml:2: sandbox.network: 'pypi.org/simple' is not a host name"):
        settings_from_text('[sandbox]\nnetwork = ["pypi.org/simple"]\n')


@pytest.mark.parametrize("address, kind", [
    ("127.0.0.1", "a loopback address"), ("127.8.9.10", "a loopback address"), ("::1", "a loopback address"),
    ("::ffff:127.0.0.1", "a loopback address"), ("64:ff9b::7f00:1", "a loopback address"),
    ("0.0.0.0", "the unspecified address"), ("::", "the unspecified address"),
    ("10.1.2.3", "a private address"), ("172.16.0.1", "a private address"), ("192.168.1.1", "a private address"),
    ("::ffff:192.168.1.1", "a private address"), ("fd00::1", "a private address"), ("fc00::1", "a private address"),
    ("169.254.169.254", "a link-local address"), ("fe80::1", "a link-local address"),
    ("100.64.0.1", "a carrier-grade NAT (shared) address"), ("224.0.0.1", "a multicast address"),
    ("ff02::1", "a multicast address"), ("198.18.0.1", "a private address"), ("240.0.0.1", "a private address"),
    ("::127.0.0.1", "a loopback address"), ("::ffff:0:10.0.0.1", "a private address"),
    ("2002:c0a8:101::1", "a private address"), ("64:ff9b:1::8.8.8.8", "a local-use NAT64 address"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "a Teredo tunnel address"), ("fec0::1", "a site-local address"),
])
def test_addresses_that_are_not_public_are_refused(address: str, kind: str) -> None:
    assert NetPolicy(True).address_refusal(ipaddress.ip_address(address)) == kind


def test_public_addresses_pass_and_the_test_range_is_only_what_the_variable_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    policy = NetPolicy(True)
    for public in ("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "8.8.8.8", "::ffff:8.8.8.8",
                   "64:ff9b::8.8.8.8", "2002:808:808::1", "::ffff:0:8.8.8.8"):
        assert policy.address_refusal(ipaddress.ip_address(public)) is None, public
    monkeypatch.setenv(TEST_PUBLIC_NETS_ENV, "198.18.0.0/15")
    testing = NetPolicy(True)
    assert testing.address_refusal(ipaddress.ip_address("198.18.0.1")) is None
    assert testing.address_refusal(ipaddress.ip_address("127.0.0.1")) == "a loopback address"
    assert testing.address_refusal(ipaddress.ip_address("10.0.0.1")) == "a private address"


def test_a_name_that_resolves_anywhere_refused_is_refused_whole() -> None:
    policy = NetPolicy(("files.example.org",))
    rows = [(2, 1, 6, "", ("93.184.215.14", 443)), (2, 1, 6, "", ("127.0.0.1", 443))]
    with pytest.raises(Refused, match=r"^files.example.org resolves to 127.0.0.1, a loopback address$"):
        policy.checked_addresses("files.example.org", rows)
    assert policy.checked_addresses("files.example.org", rows[:1]) == ["93.184.215.14"]
    with pytest.raises(Refused, match=r"^other.example.org is not in the network grant \(only files.example.org\)$"):
        policy.resolve("other.example.org", 443)  # refused before any name is resolved

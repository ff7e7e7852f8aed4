"""The client's address behind trusted proxies (accounts/addresses.py): X-Forwarded-For is
read from the right only while each hop is a trusted proxy; nobody else's is believed."""

import pytest

from accounts.addresses import client_address, parse_networks

PROXY = parse_networks(["10.0.0.2"])
TWO_PROXIES = parse_networks(["10.0.0.2", "172.16.0.0/12"])


def test_without_trusted_proxies_the_header_is_ignored():
    assert client_address("198.51.100.7", "203.0.113.1", ()) == "198.51.100.7"


def test_a_request_straight_from_a_client_ignores_what_it_wrote():
    assert client_address("198.51.100.7", "10.0.0.2, 203.0.113.1", PROXY) == "198.51.100.7"


def test_from_the_proxy_the_last_hop_is_the_client():
    assert client_address("10.0.0.2", "203.0.113.1", PROXY) == "203.0.113.1"


def test_hops_the_client_wrote_before_the_proxys_are_ignored():
    forged = "1.1.1.1, 10.0.0.2, 8.8.8.8, 203.0.113.1"

    assert client_address("10.0.0.2", forged, PROXY) == "203.0.113.1"


def test_a_chain_of_trusted_proxies_is_walked_back_to_the_client():
    # client -> 172.17.0.5 (a TLS terminator) -> 10.0.0.2 (nginx) -> the app
    chain = "6.6.6.6, 203.0.113.1, 172.17.0.5"

    assert client_address("10.0.0.2", chain, TWO_PROXIES) == "203.0.113.1"


def test_a_request_from_the_proxy_itself_is_the_proxys():
    assert client_address("10.0.0.2", None, PROXY) == "10.0.0.2"
    assert client_address("10.0.0.2", "", PROXY) == "10.0.0.2"
    assert client_address("10.0.0.2", "172.17.0.5", TWO_PROXIES) == "172.17.0.5"


@pytest.mark.parametrize(
    "remote,forwarded",
    [
        ("", None),
        ("unix:/run/app.sock", None),
        ("10.0.0.2", "203.0.113.1, not-an-address"),
        ("10.0.0.2", "203.0.113.1,"),
    ],
)
def test_a_deciding_hop_that_is_not_an_address_is_unknown(remote, forwarded):
    assert client_address(remote, forwarded, PROXY) is None


def test_a_malformed_hop_the_client_wrote_does_not_matter():
    assert client_address("10.0.0.2", "garbage, 203.0.113.1", PROXY) == "203.0.113.1"


def test_ipv6_clients_count_as_their_slash_64_and_mapped_ipv4_as_ipv4():
    assert client_address("2001:db8:1:2:aaaa::1", None, ()) == "2001:db8:1:2::/64"
    assert client_address("10.0.0.2", "2001:db8:1:2:bbbb::9", PROXY) == "2001:db8:1:2::/64"
    assert client_address("::ffff:198.51.100.7", None, ()) == "198.51.100.7"
    assert client_address("::ffff:10.0.0.2", "203.0.113.1", PROXY) == "203.0.113.1"


def test_trusted_entries_are_addresses_or_networks():
    assert [str(n) for n in parse_networks(["10.0.0.2", " 172.16.0.0/12", "::1"])] == [
        "10.0.0.2/32",
        "172.16.0.0/12",
        "::1/128",
    ]
    with pytest.raises(ValueError, match=r"'nginx' is not an IP address or network"):
        parse_networks(["10.0.0.2", "nginx"])

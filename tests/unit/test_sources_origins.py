"""Origins and identifiers: RFC-equivalent URL spellings are one origin, identifiers normalize."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultd.sources.identifiers import arxiv_key, doi_key, valid_arxiv, valid_citekey, valid_doi
from vaultd.sources.origins import BadUrl, independence_key, is_youtube, normalize_url

EQUIVALENT = [
    ("https://Example.COM/a", "https://example.com:443/a"),
    ("http://example.com", "http://example.com:80/"),
    ("https://example.com/%7Euser/", "https://example.com/~user/"),
    ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
    ("https://example.com/a/./b/../c", "https://example.com/a/c"),
    ("https://example.com/caf\u00e9", "https://example.com/caf%C3%A9"),
    ("https://b\u00fccher.de/x", "https://xn--bcher-kva.de/x"),
    ("http://[0:0:0:0:0:0:0:1]:80/x", "http://[::1]/x"),
    ("https://example.com/a#section", "https://example.com/a"),
    ("https://example.com./a", "https://example.com/a"),
]


@pytest.mark.parametrize(("one", "other"), EQUIVALENT)
def test_rfc_equivalent_spellings_are_one_origin(one: str, other: str) -> None:
    assert normalize_url(one) == normalize_url(other)
    assert independence_key(None, one, None) == independence_key(None, other, None)


def test_different_resources_stay_different() -> None:
    assert normalize_url("https://example.com/a") != normalize_url("https://example.com/b")
    assert normalize_url("https://example.com:8443/a") != normalize_url("https://example.com/a")
    assert normalize_url("https://example.com/a?x=1") != normalize_url("https://example.com/a?x=2")


@pytest.mark.parametrize(
    "bad",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "https://",
        "https://user:secret@example.com/",
        "https://exa mple.com/",
        "http://[::zz]/",
    ],
)
def test_unusable_urls_are_refused(bad: str) -> None:
    with pytest.raises(BadUrl):
        normalize_url(bad)


def test_independence_prefers_the_given_key_then_the_host_then_the_hash() -> None:
    assert independence_key("Lab Report", "https://a.example/x", "f" * 64) == "lab report"
    assert independence_key(None, "https://a.example/x", "f" * 64) == "host:a.example"
    assert independence_key(None, "/home/me/paper.pdf", "f" * 64) == "sha256:" + "f" * 64


def test_youtube_urls_are_recognized_in_any_spelling() -> None:
    assert is_youtube("https://WWW.YouTube.com:443/watch?v=x")
    assert is_youtube("https://youtu.be/x")
    assert not is_youtube("https://example.com/youtube.com")


@given(
    host=st.from_regex(r"[a-z][a-z0-9-]{0,10}\.(com|org|de)", fullmatch=True),
    path=st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), max_size=8), max_size=4),
    port=st.sampled_from(["", ":443", ":8080"]),
)
def test_normalizing_is_idempotent(host: str, path: list[str], port: str) -> None:
    url = f"https://{host}{port}/" + "/".join(p.replace("#", "").replace("?", "").replace("\\", "") for p in path)
    once = normalize_url(url)
    assert normalize_url(once) == once


def test_identifiers_normalize_for_lookup() -> None:
    assert doi_key("https://doi.org/10.1234/ABC.Def") == "10.1234/abc.def"
    assert doi_key("doi: 10.1234/X") == "10.1234/x"
    assert arxiv_key("2502.04321v2") == "2502.04321"
    assert arxiv_key("arXiv:hep-th/9901001v3") == "hep-th/9901001"
    assert valid_doi("10.1234/abc") and not valid_doi("10.12/abc") and not valid_doi("10.1234/a b")
    assert valid_arxiv("2502.04321v2") and valid_arxiv("1412.1234") and not valid_arxiv("1412.12345") and not valid_arxiv("2513.04321")
    assert valid_citekey("vaswani2017:attention") and not valid_citekey("has space")

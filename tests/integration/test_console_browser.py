"""The console in a real browser: headless Chromium (Debian's) driven by Playwright, against a real
daemon, its real console process and the real ``vaultctl``.

One person's session, in order: sign in with the one-time address ``vaultctl console`` prints,
search, open a note, watch it change when an editor writes the file, approve an agent's proposal
and find the note changed on disk, undo that operation after its preview and find the note back.
A hostile note (script tags, ``javascript:`` links, event-handler attributes) runs nothing.
Each view is photographed into ``artifacts/console/`` (git-ignored; kept by CI).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import chromium, screenshots_dir
from tests.support.harness import Daemon, Home, RawClient, copy_sample_vault, register, vaultctl
from tests.support.wait import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import BrowserContext, Dialog, Page

IDEAS = "inbox/Ideas.md"
TIMEOUT_MS = 15_000


@dataclass
class Site:
    home: Home
    daemon: Daemon
    vault: Path

    def sign_in_address(self) -> str:
        opened = vaultctl(self.home, "console", "--no-open", "--json")
        assert opened.code == 0, opened.err
        url: str = opened.json()["url"]
        return url


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    home = Home.create()
    daemon = Daemon(home)
    try:
        vault = copy_sample_vault(home.vault)
        register(home, vault, "sample")
        person = RawClient(home.socket)
        person.hello()
        change = {"id": "sample", "agents": {"patch": "propose"}}  # agents' edits wait for a person here
        preview = person.call("vault.set", change)
        person.call("vault.set", {**change, "confirm": True, "fingerprint": preview["fingerprint"]})
        person.close()
        yield Site(home, daemon, vault)
    finally:
        daemon.stop()
        home.cleanup()


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    with chromium() as context:
        context.set_default_timeout(TIMEOUT_MS)
        yield context


def _page(browser: BrowserContext, site: Site) -> Page:
    """A new tab, signed in through a fresh one-time address."""
    from playwright.sync_api import expect

    page = browser.new_page()
    page.goto(site.sign_in_address())
    page.wait_for_url("**/#/search**")
    expect(page.locator("#live")).to_have_text("live")
    return page


def _shot(page: Page, name: str) -> None:
    page.screenshot(path=str(screenshots_dir() / f"{name}.png"), full_page=True)


def _propose_patch(site: Site, old: str, new: str) -> str:
    agent = RawClient(site.home.socket)
    try:
        agent.hello(channel="mcp")
        receipt = agent.call("note.patch", {"vault": "sample", "target": "Ideas", "old": old, "new": new, "reason": "clearer words"})
    finally:
        agent.close()
    assert receipt["outcome"] == "proposed", receipt
    proposal: str = receipt["proposal"]
    return proposal


def test_a_person_signs_in_searches_reads_approves_and_undoes(site: Site, browser: BrowserContext) -> None:
    from playwright.sync_api import expect

    page = _page(browser, site)
    cookies = [c for c in browser.cookies() if c["name"].startswith("vaultd_console_")]
    assert cookies and all(c["httpOnly"] and c["sameSite"] == "Strict" for c in cookies), cookies
    assert "token" not in page.url, "the token leaves the address bar as soon as the page reads it"

    # Search, with the matches marked in each snippet.
    page.fill("input[name=q]", "bigrams")
    page.press("input[name=q]", "Enter")
    hit = page.locator(".hit").first
    expect(hit.locator("a.title")).to_have_text("Alpha Plan")
    expect(hit.locator("mark").first).to_have_text("bigrams")
    _shot(page, "search")

    # A note: rendered body, properties, backlinks; wiki-links lead to notes.
    hit.locator("a.title").click()
    expect(page.locator("#note-title")).to_have_text("Alpha Plan")
    expect(page.locator("table.properties")).to_contain_text("engineering")
    expect(page.locator("#note-body a.wikilink", has_text="Ada Lovelace")).to_have_attribute(
        "href", "#/note/sample/people%2FAda%20Lovelace.md"
    )
    expect(page.locator("ul.backlinks")).to_contain_text("projects/beta/Beta Overview.md")
    _shot(page, "note")

    # An editor changes the open note's file: the page shows it without a reload.
    page.goto(page.url.split("#")[0] + "#/note/sample/" + IDEAS.replace("/", "%2F"))
    expect(page.locator("#note-title")).to_have_text("Ideas")
    path = site.vault / IDEAS
    path.write_text(path.read_text(encoding="utf-8") + "- Written in another editor: quokka.\n", encoding="utf-8")
    expect(page.locator("#note-body")).to_contain_text("quokka")
    before = path.read_bytes()

    # An agent proposes a patch; it waits for the person, who sees its diff and approves it.
    proposal = _propose_patch(site, "A Korean query test", "A Korean search test")
    expect(page.locator("#waiting-count")).to_have_text("1")
    page.click("#nav a[data-view=waiting]")
    card = page.locator(f"article.proposal[data-id='{proposal}']")
    expect(card.locator("pre.diff .add")).to_contain_text("A Korean search test")
    expect(card.locator(".reason")).to_contain_text("clearer words")
    _shot(page, "waiting")
    assert path.read_bytes() == before, "a proposal changes nothing until a person applies it"
    card.locator("button.approve").click()
    expect(page.locator("#notice")).to_contain_text(f"Applied proposal {proposal} as operation")
    wait_until(lambda: b"A Korean search test" in path.read_bytes(), 10, "the approved patch on disk")
    applied = path.read_bytes()
    expect(page.locator("#waiting-count")).to_be_hidden()

    # The operation log shows it; Undo previews, then reverses it on confirmation.
    page.click("#nav a[data-view=ops]")
    row = page.locator("#ops tbody tr").first
    expect(row).to_contain_text("note.patch")
    expect(row).to_contain_text("proposed by mcp:test")
    row.locator("button.undo").click()
    preview = page.locator("#undo-preview")
    expect(preview.locator("ul.changes")).to_contain_text(IDEAS)
    _shot(page, "ops-undo")
    assert path.read_bytes() == applied, "the preview writes nothing"
    preview.locator("button.confirm-undo").click()
    expect(page.locator("#notice")).to_contain_text("as operation")
    wait_until(lambda: path.read_bytes() == before, 10, "the note back as it was before the proposal")
    expect(page.locator("#ops tbody tr").first).to_contain_text("op.undo")

    # Lint: the vault's findings, errors first; the sample vault has dead links (L01).
    page.click("#nav a[data-view=lint]")
    expect(page.locator("#lint-summary .verdict")).to_contain_text("error(s)")
    expect(page.locator("#lint-findings tr.finding[data-code=L01]").first).to_contain_text("L01")
    _shot(page, "lint")

    # The neighbourhood graph of a note, from the note's page; a click on a neighbour centres on it.
    page.goto(page.url.split("#")[0] + "#/note/sample/projects%2Falpha%2FAlpha%20Plan.md")
    page.click("a.graph-link")
    ada = page.locator("svg.graph a.node[data-path='people/Ada Lovelace.md']")
    expect(page.locator("svg.graph a.node.hop0")).to_have_attribute("data-path", "projects/alpha/Alpha Plan.md")
    expect(ada).to_have_count(1)
    assert page.locator("svg.graph line.edge").count() >= page.locator("svg.graph a.node.hop1").count() > 3
    _shot(page, "graph")
    ada.click()
    expect(page.locator("svg.graph a.node.hop0")).to_have_attribute("data-path", "people/Ada Lovelace.md")

    # Status: the daemon and the vault, with the vault's counts.
    page.click("#nav a[data-view=status]")
    expect(page.locator("#vaults tbody tr[data-vault=sample]")).to_contain_text("ready")
    _shot(page, "status")
    page.close()


HOSTILE = """---
title: "<img src=x onerror=window.__pwned=10>"
note: "<script>window.__pwned=11</script>"
---
# Hostile

<script>window.__pwned = 1</script>

<img src=x onerror="window.__pwned = 2">

[click me](javascript:window.__pwned=3) and [data](data:text/html,<script>window.__pwned=4</script>)

<a href="javascript:window.__pwned=5">raw link</a> <svg onload="window.__pwned=6"></svg>

[[x" onmouseover="window.__pwned=7|wiki label]] ![[y"><script>window.__pwned=8</script>]]

<iframe src="javascript:window.__pwned=9"></iframe> [spaced](  javascript:window.__pwned=12)

<details open ontoggle="window.__pwned=13">x</details>
"""


def test_a_hostile_note_runs_nothing(site: Site, browser: BrowserContext) -> None:
    from playwright.sync_api import expect

    (site.vault / "inbox" / "Hostile.md").write_text(HOSTILE, encoding="utf-8")
    reader = RawClient(site.home.socket)
    reader.hello()
    assert reader.call("note.read", {"vault": "sample", "target": "inbox/Hostile.md", "fresh": True})["title"]
    reader.close()
    page = browser.new_page()
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.add_init_script(
        "window.__violations = []; document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective));"
    )
    page.goto(site.sign_in_address())
    page.wait_for_url("**/#/search**")
    page.goto(page.url.split("#")[0] + "#/note/sample/inbox%2FHostile.md")
    body = page.locator("#note-body")
    expect(body).to_contain_text("<script>window.__pwned = 1</script>")  # shown as text
    expect(page.locator("table.properties")).to_contain_text("<img src=x onerror=window.__pwned=10>")
    for shown in ("click me", "raw link", "spaced"):
        body.get_by_text(shown).first.click()  # not links at all: markdown-it refuses those addresses
    expect(body.locator("a.inert, a[href^='javascript']")).to_have_count(0)
    body.locator("a.wikilink", has_text="wiki label").hover()
    _shot(page, "hostile-note")
    found = page.evaluate(
        """() => {
            const body = document.querySelector('#note-body');
            const all = [...body.querySelectorAll('*')];
            return {
                pwned: window.__pwned ?? null,
                scripts: body.querySelectorAll('script, iframe, svg, img, object, embed').length,
                handlers: all.flatMap(e => [...e.attributes].map(a => a.name)).filter(n => n.startsWith('on')),
                hrefs: all.filter(e => e.hasAttribute('href')).map(e => e.getAttribute('href'))
                    .filter(h => !h.startsWith('#/') && !/^https?:/.test(h)),
                violations: window.__violations,
            };
        }"""
    )
    assert found == {"pwned": None, "scripts": 0, "handlers": [], "hrefs": [], "violations": []}, json.dumps(found)
    assert dialogs == []
    page.close()

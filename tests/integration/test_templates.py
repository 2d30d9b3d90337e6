"""Templates and unique notes on a vault carrying Obsidian's own settings: note.create from a
template (core variables rendered in the vault's formats), unique notes named by the prefix
format, template.list and template.insert; Templater kept as text with a warning; a template that
embeds itself copied as written; unknown templates and unsupported tokens refused with nothing
written. Through the real vaultctl and vaultctl's socket client."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import TYPE_CHECKING, Any

from protocol.errors import ErrorCode
from protocol.issue_codes import IssueCode
from protocol.methods.receipts import Applied
from protocol.methods.templates import TEMPLATE_INSERT, TEMPLATE_LIST, TemplateInsertParams, TemplateListParams
from protocol.methods.writes import CREATE, CreateParams
from tests.support.harness import snapshot
from tests.support.typed import refused

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.harness import Daemon, Home
    from tests.support.typed import TypedClient

SETTINGS = {
    ".obsidian/templates.json": {"folder": "Templates", "dateFormat": "DD.MM.YYYY", "timeFormat": "HH:mm"},
    ".obsidian/zk-prefixer.json": {"folder": "Zettel", "format": "YYYYMMDDHHmm", "template": "Templates/Zettel"},
}
TEMPLATES = {
    "Templates/Meeting.md": "---\ntype: meeting\n---\n# {{title}}\n\nOn {{date}} at {{time}} (week {{date:gggg-[W]ww}})\n\n## Actions\n",
    "Templates/Zettel.md": "# {{title}}\n\nfrom {{date:YYYY}}\n",
    "Templates/Loop.md": "# {{title}}\n\n![[Templates/Loop]]\n",
    "Templates/Templater.md": "Today <% tp.date.now() %>\n",
    "Templates/Bad date.md": "{{date:YYYY zz}}\n",
    "Home.md": "# Home\n\n## Actions\n\n- one\n",
}


def _vault(home: Home, cli: Any) -> Path:
    root = home.root / "vault"
    for rel, text in TEMPLATES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel, value in SETTINGS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(value))
    added = cli("vault", "add", "v", str(root), "--json")
    assert added.code == 0, added.err
    return root


def test_new_from_a_template_renders_its_variables_in_the_vaults_formats(home: Home, daemon: Daemon, cli: Any) -> None:
    root = _vault(home, cli)
    made = cli("new", "meetings/Standup", "--template", "Meeting", "--json")
    assert made.code == 0, made.err
    text = (root / "meetings/Standup.md").read_text()
    match = re.fullmatch(
        r"---\ntype: meeting\ncreated: \S+\nupdated: \S+\n---\n# Standup\n\nOn (\d\d)\.(\d\d)\.(\d{4}) at \d\d:\d\d \(week (\d{4})-W(\d\d)\)\n\n## Actions\n",
        text,
    )
    assert match is not None, text
    day = dt.date(int(match[3]), int(match[2]), int(match[1]))
    assert abs((day - dt.date.today()).days) <= 1
    assert 2000 < int(match[4]) and 1 <= int(match[5]) <= 53


def test_a_unique_note_is_named_by_the_prefix_format_in_its_folder_from_its_template(
    home: Home, daemon: Daemon, cli: Any, typed: TypedClient
) -> None:
    root = _vault(home, cli)
    receipt = typed.call(CREATE, CreateParams(vault="v", path="Thought", unique=True))
    assert isinstance(receipt, Applied)
    path = receipt.changes[0].path
    match = re.fullmatch(r"Zettel/(\d{12}) Thought\.md", path)
    assert match is not None, path
    assert (root / path).read_text().startswith("---\ncreated: ")
    assert f"# {match[1]} Thought\n\nfrom {match[1][:4]}\n" in (root / path).read_text()
    plain = cli("new", "Bare", "--unique", "--template", "Meeting", "--json")
    assert plain.code == 0, plain.err
    assert re.fullmatch(r"Zettel/\d{12} Bare\.md", plain.json()["changes"][0]["path"])


def test_template_list_names_the_templates_folder(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    _vault(home, cli)
    listed = typed.call(TEMPLATE_LIST, TemplateListParams(vault="v"))
    assert listed.folder == "Templates"
    assert [t.name for t in listed.templates] == ["Bad date", "Loop", "Meeting", "Templater", "Zettel"]
    shown = cli("templates")
    assert shown.code == 0 and "Meeting" in shown.out


def test_insert_adds_a_rendered_template_under_a_heading_and_keeps_the_notes_keys(
    home: Home, daemon: Daemon, cli: Any, typed: TypedClient
) -> None:
    root = _vault(home, cli)
    (root / "Home.md").write_text("---\ntype: hub\n---\n# Home\n\n## Actions\n\n- one\n\n## Later\n")
    receipt = typed.call(TEMPLATE_INSERT, TemplateInsertParams(vault="v", target="Home", template="Zettel", under="## Actions"))
    assert isinstance(receipt, Applied)
    year = dt.date.today().year
    text = (root / "Home.md").read_text()
    assert text.startswith("---\ntype: hub\n")
    assert re.search(rf"## Actions\n\n- one\n# Home\n\nfrom ({year}|{year - 1}|{year + 1})\n\n## Later\n", text), text
    via_cli = cli("insert", "Home", "Meeting")
    assert via_cli.code == 0, via_cli.err
    assert "type: hub" in (root / "Home.md").read_text() and "type: meeting" not in (root / "Home.md").read_text()


def test_templater_is_inserted_as_written_with_a_warning(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli)
    receipt = typed.call(CREATE, CreateParams(vault="v", path="T", template="Templater"))
    assert isinstance(receipt, Applied)
    assert [w.code for w in receipt.warnings] == [IssueCode.O01]
    assert "Today <% tp.date.now() %>\n" in (root / "T.md").read_text()


def test_a_template_that_embeds_itself_is_copied_as_written(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli)
    receipt = typed.call(CREATE, CreateParams(vault="v", path="L", template="Loop"))
    assert isinstance(receipt, Applied)
    assert (root / "L.md").read_text().endswith("# L\n\n![[Templates/Loop]]\n")


def test_bad_templates_are_refused_and_nothing_is_written(home: Home, daemon: Daemon, cli: Any, typed: TypedClient) -> None:
    root = _vault(home, cli)
    before = snapshot(root)
    with refused(ErrorCode.VALIDATION, IssueCode.O02) as refusal:
        typed.call(CREATE, CreateParams(vault="v", path="X", template="Bad date"))
    assert "'zz'" in refusal.data.message
    with refused(ErrorCode.NOT_FOUND):
        typed.call(CREATE, CreateParams(vault="v", path="X", template="Nope"))
    with refused(ErrorCode.INVALID_PARAMS):
        typed.call(CREATE, CreateParams(vault="v", path="X", template="Meeting", body="both"))
    with refused(ErrorCode.NOT_FOUND):
        typed.call(TEMPLATE_INSERT, TemplateInsertParams(vault="v", target="Home", template="Nope"))
    (root / ".obsidian/zk-prefixer.json").write_text(json.dumps({"format": "NNNN"}))
    with refused(ErrorCode.VALIDATION, IssueCode.O02):
        typed.call(CREATE, CreateParams(vault="v", path="X", unique=True))
    assert snapshot(root) == {**before, ".obsidian/zk-prefixer.json": b'{"format": "NNNN"}'}

"""What a shell line names, as the agent-host guard reads it: a fixed table of lines, the
reproduced ways around the guard, and properties over generated file names and arbitrary text.

A command not known only to read names every path its words spell (the guard refuses those at,
inside or above a vault), so the table says which paths a line must name, and the read-only lines
that must name none."""

from __future__ import annotations

import os
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultctl.guard.shell import MAX_COMMAND_CHARS, shell_writes

ENV = {"HOME": "/home/u", "PWD": "/work"}
CWD = "/work"

CASES: list[tuple[str, list[str], list[str]]] = [
    ("ls -la && grep -r x notes/", [], []),
    ("pytest -q tests/", [], []),
    ("echo hi > notes/a.md", ["/work/notes/a.md"], []),
    ("echo hi >> /v/log.md", ["/v/log.md"], []),
    ("ls 2>&1 > /v/out", ["/v/out"], []),
    ("cmd &> /v/both", ["/v/both"], []),
    ("cat < /v/a.md", [], []),
    ("rm -rf -- /v/x '/v/y z.md'", ["/v/x", "/v/y z.md"], []),
    ("mv a.md b.md", ["/work/a.md", "/work/b.md"], []),
    ("cp /v/a.md /tmp/", ["/tmp"], []),
    ("cp -r /tmp/a /v/b", ["/v/b"], []),
    ("cp -t /v/dest one two", ["/v/dest"], []),
    ("rsync -a /tmp/ host:/v/", [], []),
    ("sed -i s/a/b/ x.md y.md", ["/work/x.md", "/work/y.md"], []),
    ("sed -n p x.md", [], []),
    ("sed -i -e s/a/b/ x.md", ["/work/x.md"], []),
    ("perl -pi -e 's/a/b/' /v/x.md", ["/v/x.md"], []),
    ("dd if=/dev/zero of=/v/x bs=1", ["/v/x"], []),
    ("touch ~/Notes/new.md", ["/home/u/Notes/new.md"], []),
    ("tee $HOME/Notes/a.md ${HOME}/b.md < in", ["/home/u/Notes/a.md", "/home/u/b.md"], []),
    ("cd ~/Notes && sed -i s/x/y/ a.md", ["/home/u/Notes/a.md"], []),
    ("cd /v; cd sub; rm x", ["/v/sub/x"], []),
    ("git status && git log", [], []),
    ("git -C /v checkout -- .", ["/v"], []),
    ("cd /v && git stash", ["/v"], []),
    ("git --work-tree=/v reset --hard", ["/work"], []),
    ("find /v -name '*.tmp' -delete", ["/v"], []),
    ("find /v -name '*.md'", [], []),
    ("find . -name '*.md' | xargs rm", ["/work"], []),
    ("FOO=1 sudo -u someone mv a b", ["/work/a", "/work/b"], []),
    ("nice -n 5 ls", [], []),
    ("env -i rm /v/a", ["/v/a"], []),
    ("cat <<EOF > /v/n.md\nrm -rf /elsewhere\nEOF\nrm /y", ["/v/n.md", "/y"], []),
    ("cat <<-A <<'B'\nrm a\nA\nrm b\nB\necho done > /z", ["/z"], []),
    ("echo '# not a comment' > x # rm /v", ["/work/x"], []),
    ("vaultctl search 'alpha plan'", [], []),
    ("vaultctl show Alpha --json", [], []),
    ("vaultctl proposals", [], []),
    ("vaultctl proposals show p1", [], []),
    ("vaultctl vault policy notes", [], []),
    ("vaultctl setup claude", [], []),
    ("vaultctl proposals apply p1", [], ["proposals apply"]),
    ("vaultctl vault policy notes move=apply", [], ["vault policy"]),
    ("vaultctl setup claude --apply", [], ["setup"]),
    ("/usr/bin/vaultctl --json delete Gamma --confirm", [], ["delete"]),
    ("vaultctl undo 2026 && vaultctl new x", [], ["undo", "new"]),
    ("vaultctl console --no-open --json", [], ["console"]),  # its address signs in as the person
    ("vaultctl console --stop", [], ["console"]),
]


@pytest.mark.parametrize(("line", "paths", "commands"), CASES, ids=[c[0][:40] for c in CASES])
def test_a_line_writes_what_its_words_say(line: str, paths: list[str], commands: list[str]) -> None:
    found = shell_writes(line, CWD, ENV)
    assert set(paths) <= set(found.paths)
    if not paths and not commands and line in READ_ONLY_LINES:
        assert found.paths == [] and found.inside == []
    assert found.vaultctl == commands


READ_ONLY_LINES = {
    "ls -la && grep -r x notes/",
    "cat < /v/a.md",
    "sed -n p x.md",
    "git status && git log",
    "find /v -name '*.md'",
    "nice -n 5 ls",
}


def test_an_unclosed_quote_is_judged_by_every_path_like_word() -> None:
    found = shell_writes("sed -i 's/a/b /v/notes/a.md", CWD, ENV)
    assert "/v/notes/a.md" in found.paths


def test_a_line_past_the_bound_is_judged_by_its_path_like_words() -> None:
    line = "echo " + "x" * MAX_COMMAND_CHARS + " > /v/a.md"
    assert shell_writes(line, CWD, ENV).refusals, "a line longer than the guard reads is refused"
    long_head = "rm /v/a.md; echo " + "x" * MAX_COMMAND_CHARS
    assert "/v/a.md" in shell_writes(long_head, CWD, ENV).paths  # ...and what fits is judged too


NAMES = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00/"),
    min_size=1,
    max_size=40,
).filter(lambda n: n not in (".", ".."))


@settings(max_examples=300, deadline=None)
@given(
    names=st.lists(NAMES, min_size=1, max_size=4),
    verb=st.sampled_from(["rm", "rm -f --", "touch", "mkdir -p", "chmod 600", "chown me:us", "truncate -s 0"]),
)
def test_quoted_names_come_back_exactly(names: list[str], verb: str) -> None:
    line = f"{verb} " + " ".join(shlex.quote(f"/v/{n}") for n in names)
    found = shell_writes(line, CWD, ENV)
    expected = [os.path.normpath(f"/v/{n}") for n in names]
    assert set(expected) <= set(found.paths)


@settings(max_examples=300, deadline=None)
@given(name=NAMES)
def test_a_redirect_to_a_quoted_name_is_that_path(name: str) -> None:
    found = shell_writes(f"printf x > {shlex.quote('notes/' + name)}", CWD, ENV)
    assert found.paths == [os.path.normpath(f"/work/notes/{name.split(chr(0))[0]}")]


@settings(max_examples=500, deadline=None)
@given(line=st.text(max_size=300))
def test_any_text_gives_absolute_paths_and_no_exception(line: str) -> None:
    found = shell_writes(line, CWD, ENV)
    assert all(p.startswith("/") for p in found.paths)
    assert all(isinstance(c, str) and c for c in found.vaultctl)


def test_text_past_ascii_never_crashes_the_parser() -> None:
    """tree-sitter-bash's scanner corrupts memory on ``{`` before a four-byte character; the line
    is parsed masked, and read back whole."""
    for _ in range(500):
        found = shell_writes("rm /v/{\U000dca74}/Übersicht.md", CWD, ENV)
    assert found.paths == ["/v"]
    assert shell_writes("rm '/v/Übersicht 😀.md'", CWD, ENV).paths == ["/v/Übersicht 😀.md"]

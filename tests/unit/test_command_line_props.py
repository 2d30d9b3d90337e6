"""A printed command line (a preview's confirm command) pastes back to the very words it was made
from, whatever they hold: backslashes (a PII regex, JSON), quotes, $, controls, bidi characters,
bytes that are not UTF-8; and printing it through the terminal escaping changes nothing."""

from __future__ import annotations

import re
import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultctl.render import compose, say
from vaultctl.terminal import command_line, escape

_ACTIVE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

#: NUL is left out: no command-line argument can hold one.
_hostile = st.sampled_from(["\\", "\\\\", "'", '"', "$", "`", "!", " ", "\t", "\n", "\r", "\x1b", "\x07", "\x85", "\u202e", "\udc80"])
_word = st.lists(
    st.one_of(_hostile, st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), st.sampled_from(["d", "{4}", "x1b", "u202e"])),
    max_size=12,
).map("".join)


def _bash_words(line: str) -> list[bytes]:
    """The words bash reads from ``line``, as bytes (each ends in NUL)."""
    done = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, check=True, env={"LC_ALL": "C"})
    return done.stdout.split(b"\0")[:-1]


@settings(max_examples=150, deadline=None)
@given(st.lists(_word, min_size=1, max_size=4))
def test_a_printed_command_pastes_back_to_its_words(words: list[str]) -> None:
    line = command_line(words)
    printed = escape(compose(["to confirm, run:", line]), multiline=True)
    assert printed.endswith(line)  # the escaping of output leaves it alone
    assert not _ACTIVE.search(line)  # nothing a terminal would act on
    assert "\n" not in line and "\t" not in line  # one line, pasted whole
    assert _bash_words(line) == [w.encode("utf-8", "surrogateescape") for w in words]


def test_a_pii_regex_in_json_survives_the_preview(capsys) -> None:  # type: ignore[no-untyped-def]
    policy = '{"patterns": [{"name": "emp", "regex": "EMP-\\\\d{4}\\\\b"}]}'
    say(compose(["to confirm, run:", command_line(["vaultctl", "vault", "set", "v", "--pii", policy])]))
    printed = capsys.readouterr().out.splitlines()[-1]
    assert _bash_words(printed)[-1] == policy.encode()

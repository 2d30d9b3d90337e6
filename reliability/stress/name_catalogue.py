"""The hostile names a shared vault may hold, and what vaultd's index should make of each.

A fixed list covers every class once (invalid UTF-8, C0 and C1 controls, DEL, terminal escapes,
bidi and zero-width characters, 255-byte names in 1- to 4-byte UTF-8, case and normalization
twins, Obsidian's link breakers, option and path look-alikes) with hostile folder names beside it;
hypothesis draws more (:func:`draw_names`). :func:`expect` is the oracle the round checks the
daemon against: listed as a note, an attachment, ignored, or skipped with S07 and by which folder.
The round itself is :mod:`reliability.stress.names`.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NAME_MAX = 255  #: bytes in one file name on ext4 (and most Linux filesystems)
SKIPPED_DIRS = frozenset({".vaultd", ".git", ".obsidian", ".trash"})
TEMP_PREFIX, TEMP_SUFFIX = ".vaultd-", ".tmp"


# -- the names -------------------------------------------------------------------------------------


def utf8(text: str) -> bytes:
    return text.encode("utf-8")


def padded(unit: str, total: int, suffix: str = ".md") -> str:
    """``unit`` repeated to exactly ``total`` UTF-8 bytes with ``suffix`` (filler 'x' if needed)."""
    room = total - len(utf8(suffix))
    n = room // len(utf8(unit))
    return unit * n + "x" * (room - n * len(utf8(unit))) + suffix


def fixed_names() -> list[tuple[str, bytes]]:
    """(label, file name bytes): every class of hostile name once; none holds '/' or NUL."""
    out: list[tuple[str, bytes]] = [
        ("utf8.ff", b"bad\xff.md"),
        ("utf8.c328", b"\xc3\x28 broken pair.md"),
        ("utf8.surrogate", b"cesu \xed\xa0\x80.md"),
        ("utf8.overlong", b"over\xc0\xaflong.md"),
        ("utf8.truncated", b"cut \xe2\x82.md"),
        ("utf8.f8", b"five\xf8\x88\x80\x80\x80.md"),
        ("utf8.latin1", "caf\xe9".encode("latin-1") + b".md"),
        ("utf8.in_suffix", b"x.m\xffd"),
    ]
    out += [(f"c0.{i:02x}", utf8(f"c0 {i:02x} {chr(i)} end.md")) for i in range(1, 0x20)]
    out += [(f"c1.{i:02x}", utf8(f"c1 {i:02x} {chr(i)} end.md")) for i in range(0x80, 0xA0)]
    out += [
        ("del", utf8("del \x7f end.md")),
        ("esc.osc_title", utf8("\x1b]0;pwned\x07 title.md")),
        ("esc.osc_st", utf8("\x1b]2;pwned\x1b\\ st.md")),
        ("esc.csi_clear", utf8("\x1b[2J\x1b[H clear.md")),
        ("esc.csi_color", utf8("\x1b[31mred\x1b[0m.md")),
        ("esc.c1_csi", utf8("\x9b2J c1 clear.md")),
        ("esc.osc8_link", utf8("\x1b]8;;http:x\x1b\\link\x1b]8;;\x1b\\.md")),
        ("nl.lf", utf8("line\nbreak.md")),
        ("nl.cr", utf8("carriage\rreturn.md")),
        ("nl.crlf", utf8("crlf\r\nname.md")),
        ("nl.tab", utf8("tab\tname.md")),
        ("nl.trailing_lf", utf8("trailing lf.md\n")),
        ("nl.lf_only", utf8("\n.md")),
        ("nl.ls_ps", utf8("line\u2028para\u2029sep.md")),
        ("nl.nel", utf8("next\x85line.md")),
    ]
    for cp in (0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C):
        out.append((f"bidi.{cp:04x}", utf8(f"bidi {chr(cp)}dm.exe.md")))
    out.append(("bidi.rlo_suffix", utf8("invoice\u202egpj.md")))
    for cp in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x034F):
        out.append((f"zw.{cp:04x}", utf8(f"zero{chr(cp)}width.md")))
    out += [
        ("zw.alone", utf8("\u200b.md")),
        ("zw.bom_lead", utf8("\ufeffbom.md")),
        ("len255.ascii", utf8(padded("a", NAME_MAX))),
        ("len255.2byte", utf8(padded("\u00e9", NAME_MAX))),
        ("len255.3byte", utf8(padded("\u20ac", NAME_MAX))),
        ("len255.4byte", utf8(padded("\U0001f600", NAME_MAX))),
        ("len255.mixed", utf8(padded("a\u00e9\u20ac\U0001f600", NAME_MAX))),
        ("case.title", b"Twin.md"),
        ("case.lower", b"twin.md"),
        ("case.upper", b"TWIN.md"),
        ("case.sharp_s", utf8("stra\u00dfe.md")),
        ("case.ss", b"strasse.md"),
        ("case.dotless_i", utf8("\u0131stanbul.md")),
        ("nf.nfc", utf8(unicodedata.normalize("NFC", "\u00dcn\u00efc\u00f6de.md"))),
        ("nf.nfd", utf8(unicodedata.normalize("NFD", "\u00dcn\u00efc\u00f6de.md"))),
        ("nf.hangul_nfd", utf8(unicodedata.normalize("NFD", "\ud55c\uae00.md"))),
        ("nf.combining_alone", utf8("\u0301.md")),
        ("nf.fullwidth", utf8("\uff26\uff55\uff4c\uff4c.md")),
        ("obs.lbracket", b"a[b.md"),
        ("obs.rbracket", b"a]b.md"),
        ("obs.hash", b"a#b.md"),
        ("obs.caret", b"a^b.md"),
        ("obs.pipe", b"a|b.md"),
        ("obs.wikilink", b"[[wiki]].md"),
        ("obs.all", b"[x]#^|y.md"),
        ("obs.embed", b"![[embed]].md"),
        ("obs.colon", b"a:b.md"),
        ("obs.percent", b"100%25 a%2Fb.md"),
        ("dash.one", b"-rf.md"),
        ("dash.two", b"--help.md"),
        ("dash.json", b"--json.md"),
        ("dash.vault", b"--vault=other.md"),
        ("dash.alone", b"-.md"),
        ("dash.double_alone", b"--.md"),
        ("dot.hidden", b".hidden.md"),
        ("dot.two", b"..double.md"),
        ("dot.three", b"...md"),
        ("dot.md_alone", b".md"),
        ("dot.md_upper", b".MD"),
        ("dot.upper_suffix", b"Upper.MD"),
        ("dot.md_md", b"x.md.md"),
        ("dot.double_suffix", b"x..md"),
        ("trail.space", b"trailing space.md "),
        ("trail.dot", b"trailing dot.md."),
        ("trail.stem_space", b"stem space .md"),
        ("trail.stem_dot", b"stem dot..md"),
        ("trail.nbsp", utf8("nbsp\u00a0.md")),
        ("path.backslash", b"a\\b.md"),
        ("path.dotdot_backslash", b"..\\..\\etc.md"),
        ("path.drive", b"C:.md"),
        ("path.tilde", b"~.md"),
        ("path.home", b"$HOME.md"),
        ("path.subst", b"$(id).md"),
        ("path.backtick", b"`id`.md"),
        ("path.quote", b"'; rm -rf ~; '.md"),
        ("path.dquote", b'"quoted".md'),
        ("path.glob", b"*?.md"),
        ("path.format", b"%s%n%x.md"),
        ("path.braces", b"{}.md"),
        ("path.url", b"http:..evil.md"),
        ("path.windows_con", b"CON.md"),
        ("path.windows_nul", b"nul.md"),
        ("path.escaped_lookalike", b"\\x1b.md"),
        ("path.u_lookalike", b"\\u202e.md"),
        ("path.backslash_end", b"end\\.md"),
        ("path.space_only", b" .md"),
        ("path.looks_skipped", b".git.md"),
        ("path.trash_twin", b".Trash.md"),
        ("path.temp_like", b".vaultd-x.tmp.md"),
        ("wide.cjk", utf8("\u65e5\u672c\u8a9e\u306e\u30ce\u30fc\u30c8.md")),
        ("wide.astral", utf8("\U0001d518\U0001d52b\U0001d526.md")),
        ("wide.emoji_zwj", utf8("\U0001f468\u200d\U0001f469\u200d\U0001f467.md")),
        ("wide.private_use", utf8("\ue000\U000f0000.md")),
        ("wide.noncharacter", utf8("\ufffe\uffff.md")),
        ("wide.replacement", utf8("\ufffd.md")),
        ("attach.png", b"\x1b[2J picture.png"),
        ("attach.no_suffix", b"\x1b]0;x\x07"),
    ]
    return out


#: (label, folder name bytes) for the folders the fixed names are also written into.
FOLDERS: list[tuple[str, bytes]] = [
    ("dir.esc", utf8("\x1b[2J\x1b]0;dir\x07 folder")),
    ("dir.dash", b"-rf"),
    ("dir.dot", b".hidden dir"),
    ("dir.lf", utf8("dir\nline")),
    ("dir.bidi", utf8("\u202eriD")),
    ("dir.twin_a", b"Twins"),
    ("dir.twin_b", b"twins"),
    ("dir.nfd", utf8(unicodedata.normalize("NFD", "Ordn\u00e9r"))),
    ("dir.bad", b"bad\xfedir"),
    ("dir.len255", utf8(padded("\u20ac", NAME_MAX, ""))),
    ("dir.obsidian", b"a[#^|]b"),
    ("dir.trailing", b"trail. "),
]


def _name_byte(b: int) -> bool:
    return b not in (0, 0x2F)


#: hypothesis: one file name's bytes (1..255, no '/' or NUL), most of them ending in .md
_hostile_chars = st.sampled_from(
    [chr(i) for i in range(1, 0x20)]
    + ["\x7f"]
    + [chr(i) for i in range(0x80, 0xA0)]
    + list("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u200b\u200c\u200d\u2060\ufeff")
    + list("[]#^|-. \\:*?\"'`$%~")
    + ["\u00e9", "e\u0301", "\u20ac", "\U0001f600", "\u00df", "\u0130", "\u2028"]
)
_text = st.lists(
    st.one_of(_hostile_chars, st.characters(exclude_categories=["Cs"], exclude_characters="/\x00")), min_size=1, max_size=40
).map("".join)
_raw = st.binary(min_size=1, max_size=60).map(lambda b: bytes(x for x in b if _name_byte(x)) or b"x")


def _fit(name: bytes) -> bytes:
    return name[:NAME_MAX]


drawn_names: st.SearchStrategy[bytes] = (
    st.one_of(
        _text.map(lambda t: _fit(utf8(t) + b".md")),
        _text.map(lambda t: _fit(utf8(t))),
        _raw.map(lambda b: _fit(b + b".md")),
        st.tuples(_text, st.sampled_from(["a", "\u00e9", "\u20ac", "\U0001f600"])).map(
            lambda p: utf8(padded(p[1], NAME_MAX))[: NAME_MAX - len(utf8(p[0])[:60]) - 3] + utf8(p[0])[:60] + b".md"
        ),
    )
    .map(lambda b: _fit(b) if len(b) <= NAME_MAX else b[:NAME_MAX])
    .filter(lambda b: b not in (b".", b"..") and all(_name_byte(x) for x in b))
)


def draw_names(count: int, seed: int | None) -> list[bytes]:
    """``count`` names from :data:`drawn_names` (reproducible with ``seed``)."""
    if count <= 0:
        return []
    found: list[bytes] = []

    @settings(max_examples=count, deadline=None, database=None, derandomize=seed is not None, suppress_health_check=list(HealthCheck))
    @given(drawn_names)
    def collect(name: bytes) -> None:
        found.append(name)

    collect()
    return found


# -- what the index should make of a path ----------------------------------------------------------


def decode(rel: bytes) -> str:
    """A path's ``str`` as the daemon's ``os`` calls give it (undecodable bytes as surrogates)."""
    return os.fsdecode(rel)


def shown(rel: bytes) -> str:
    """How replies name a path: valid UTF-8 as is, other bytes as ``\\xNN``."""
    return rel.decode("utf-8", "backslashreplace")


def _valid(part: bytes) -> bool:
    try:
        part.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@dataclass(frozen=True)
class Expect:
    """What the index should do with one path: ``note``, ``attachment``, ``ignored`` or a skip code."""

    kind: str
    skip_path: bytes | None = None  #: the component whose S07 issue covers it


def expect(rel: bytes) -> Expect:
    parts = rel.split(b"/")
    for i, part in enumerate(parts):
        text = part.decode("utf-8", "surrogateescape")
        if text in SKIPPED_DIRS or (i == len(parts) - 1 and text.startswith(TEMP_PREFIX) and text.endswith(TEMP_SUFFIX)):
            return Expect("ignored")
        if not _valid(part):
            return Expect("S07", b"/".join(parts[: i + 1]))
    return Expect("note" if rel[-3:].lower() == b".md" else "attachment")

"""What a shell command line names, read by a real parser, for the agent-host guard.

An agent that cannot edit a vault file with its host's edit tool could still reach it through the
host's shell tool, and the shell's grammar is large: compound commands, substitutions, wrappers
that run other commands (``timeout``, ``setsid``, ``flock``, ``busybox``, ``bash -c``, ``| sh``,
``eval``), globs that expand to a vault's folder, ``cd`` before a relative path. A list of known
writers can never be complete, so this module turns the question around and fails closed:

- The line is parsed by tree-sitter's bash grammar, and every command in every compound form is
  walked (lists, pipelines, subshells, ``if``/``for``/``while``/``case`` bodies, functions,
  command and process substitutions, ``bash -c`` strings, ``eval``).
- A command on a short list of commands known only to read (:data:`READ_ONLY`, with the options
  that make some of them write taken out) names nothing; every other command *names* every path
  its words spell, which the guard refuses when it is at, inside or above a guarded vault.
  Redirection targets are named whatever the command.
- A word the parser cannot resolve (an unknown variable, a command substitution) names the folder
  of its literal start, as a glob does: ``rm /v/$f`` names ``/v``. Code handed to an interpreter
  (``python -c``), a script fed to a shell on its input, and a line the grammar cannot parse are
  read as text: every word in them that could be a path is named.
- ``vaultctl`` commands that act as the person are listed wherever they appear: behind any
  wrapper, inside ``bash -c`` or ``eval``, or merely mentioned in code an interpreter runs.

Paths are resolved as the kernel will: links first, then ``..`` (``os.path.realpath``). The guard
keeps honest agents and accidents off the vaults; it is not a sandbox (docs/agents.md, Threat
model): a program can always compute a path at run time. The host's sandbox is what enforces.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from vaultctl.guard.commands import (
    ACTS_ON_CWD,
    INTERPRETERS,
    READ_ONLY,
    SHELLS,
    VAULTCTL_NAMES,
    WRAPPER_OPERAND,
    WRAPPER_VALUES,
    WRAPPERS,
    reads_only,
    vaultctl_command,
    vaultctl_reads,
)

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Tree

MAX_COMMAND_CHARS = 256 * 1024  #: longer lines are refused outright (judged by their words alone)
MAX_TEXT_WORDS = 512  #: words of opaque text judged one by one; past this the working folder stands for them
MAX_DEPTH = 8  #: ``bash -c`` inside ``eval`` inside ...: deeper nesting is read as text

_OUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&", "&>|"})
_GLOB = re.compile(r"[*?\[{]")
_TEXT_WORD = re.compile(r"[^\s'\"`;|&()<>{}=,:$\\]+")
CODE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "--eval", "--command", "--exec", "-p"})


class ShellWrites:
    """What one command line names. (A plain class: ``dataclasses`` costs a hook that runs before
    every tool call several milliseconds to import.)"""

    __slots__ = ("inside", "paths", "refusals", "vaultctl")

    def __init__(self) -> None:
        self.paths: list[str] = []  #: absolute paths it names: refused at, inside or above a vault
        self.inside: list[str] = []  #: folders it runs in: refused only at or inside a vault
        self.vaultctl: list[str] = []  #: ``vaultctl`` commands acting as the user, as typed
        self.refusals: list[str] = []  #: reasons decided from the line alone

    def __repr__(self) -> str:
        return f"ShellWrites(paths={self.paths!r}, inside={self.inside!r}, vaultctl={self.vaultctl!r}, refusals={self.refusals!r})"


_language: Language | None = None


_ASCII = bytes(range(128)) + b"a" * 128


def _parse(source: bytes) -> Tree:
    """Parse ``source`` with every byte past ASCII read as the letter ``a``.

    tree-sitter-bash 0.25's scanner corrupts memory on some non-ASCII text (``{`` before a
    four-byte character crashes the process within a few hundred parses; found by fuzzing). Bash
    itself treats those bytes as word characters, as it does ``a``, so the masked line has the
    same structure and the same byte offsets: node texts are read from the real line. The caller
    keeps the tree: its nodes point into it.
    """
    global _language  # loaded once per process
    import tree_sitter

    if _language is None:
        import tree_sitter_bash

        _language = tree_sitter.Language(tree_sitter_bash.language())
    return tree_sitter.Parser(_language).parse(source.translate(_ASCII))


class _Word:
    """A word as the shell would see it: its text when fully known, else its literal start."""

    __slots__ = ("glob", "known", "text")

    def __init__(self, text: str, *, known: bool = True, glob: bool = False) -> None:
        self.text = text  #: the whole word when known, else the literal text before the first unknown part
        self.known = known
        self.glob = glob


class _Walk:
    """One walk over a parsed line: the environment it sees, and what it found."""

    def __init__(self, env: dict[str, str], out: ShellWrites, depth: int = 0) -> None:
        self.env = env
        self.vars: dict[str, str | None] = {}
        self.out = out
        self.depth = depth
        self.source = b""  #: the line being walked, as the parser's byte offsets count

    def src(self, node: Node) -> str:
        """A node's text, from the line itself (the parser saw a masked copy)."""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    # --- words -----------------------------------------------------------------------------

    def lookup(self, name: str) -> str | None:
        if name in self.vars:
            return self.vars[name]
        if name in (
            "HOME",
            "PWD",
            "USER",
            "TMPDIR",
            "XDG_DATA_HOME",
            "XDG_CONFIG_HOME",
            "XDG_RUNTIME_DIR",
            "VAULTD_HOME",
            "VAULTD_SOCKET",
            "CODEX_HOME",
            "CLAUDE_CONFIG_DIR",
        ):
            return self.env.get(name)
        return self.env.get(name) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else None

    def word(self, node: Node, cwd: str | None) -> _Word:
        parts: list[_Word] = []
        self._parts(node, parts, cwd)
        text, glob = "", False
        for part in parts:
            if not part.known:
                return _Word(text + part.text, known=False, glob=True)
            text += part.text
            glob = glob or part.glob
        return _Word(text, glob=glob)

    def _parts(self, node: Node, parts: list[_Word], cwd: str | None) -> None:
        kind = node.type
        raw = self.src(node)
        if kind == "concatenation":
            for child in node.children:
                self._parts(child, parts, cwd)
        elif kind in ("word", "number", "variable_name", "special_variable_name"):
            parts.append(_Word(_unescape(raw), glob=bool(_GLOB.search(raw.replace("\\*", "").replace("\\?", "")))))
        elif kind == "raw_string":
            parts.append(_Word(raw[1:-1]))
        elif kind == "string":
            quoted: list[_Word] = []
            for child in node.named_children:
                self._parts(child, quoted, cwd)
            for part in quoted:
                part.glob = False  # a quoted word's glob characters are literal
            parts += quoted
        elif kind == "string_content":
            parts.append(_Word(re.sub(r"\\([$`\"\\\n])", r"\1", raw)))
        elif kind == "simple_expansion":
            name = raw[1:]
            value = self.lookup(name)
            parts.append(_Word(value) if value is not None else _Word("", known=False))
        elif kind == "expansion":
            inner = raw[2:-1]
            value = self.lookup(inner) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", inner) else None
            if value is None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", inner):
                self.text(inner, cwd)  # ${x:-/some/path}: the words it may stand for
            parts.append(_Word(value) if value is not None else _Word("", known=False))
        elif kind in ("command_substitution", "process_substitution"):
            self.walk_children(node, cwd)
            parts.append(_Word("", known=False))
        else:  # ansi_c_string, arithmetic_expansion, brace_expression, translated_string, ...
            self.text(raw, cwd)
            parts.append(_Word("", known=False))

    # --- naming paths ----------------------------------------------------------------------

    def name(self, word: _Word, cwd: str | None) -> None:
        """Record the path ``word`` spells (a glob or an unknown part: the folder of its start)."""
        text = word.text
        if text == "~" or text.startswith("~/"):
            home = self.lookup("HOME")
            if home:
                text = home + text[1:]
        if word.glob or not word.known:
            text = text[: m.start()] if (m := _GLOB.search(text)) and word.known else text
            text = text.rsplit("/", 1)[0] + "/" if "/" in text else ""
            if text == "" and cwd is None:
                self.out.refusals.append("a word the guard cannot resolve is taken from a folder it cannot know before the line runs")
                return
        if not text.startswith("/") and cwd is None:
            self.out.refusals.append(
                "a relative path is taken from a folder the guard cannot know before the line runs (after a cd it cannot follow)"
            )
            return
        self.out.paths.append(resolve(text or ".", cwd or "/"))

    def text(self, text: str, cwd: str | None) -> None:
        """Judge text nobody parses here (interpreter code, a script on a shell's input): each
        word in it that could name a file, and any mention of vaultctl."""
        if re.search(r"vaultctl", text):
            self.out.vaultctl.append("(run from code the guard cannot read)")
        text = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: self.lookup(m.group(1)) or m.group(0), text)
        words = list(dict.fromkeys(_TEXT_WORD.findall(text)))
        if len(words) > MAX_TEXT_WORDS:
            words = [w for w in words if "/" in w or w.startswith(("~", "."))][:MAX_TEXT_WORDS]
            if cwd is not None:
                self.out.paths.append(resolve(".", cwd))
        for w in (w.lstrip("-") for w in words):
            if not w:
                continue
            self.name(_Word(w, glob=bool(_GLOB.search(w))), cwd)

    # --- commands --------------------------------------------------------------------------

    def walk_children(self, node: Node, cwd: str | None) -> str | None:
        for child in node.named_children:
            cwd = self.walk(child, cwd)
        return cwd

    def walk(self, node: Node, cwd: str | None) -> str | None:
        """Walk one node; return the working folder after it (``cd``), None when unknown."""
        kind = node.type
        if kind == "command":
            return self.command(node, cwd, [])
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            redirects = [c for c in node.named_children if c is not body]
            if body is not None and body.type == "command":
                return self.command(body, cwd, redirects)
            for r in redirects:
                self.redirect(r, cwd)
            return self.walk(body, cwd) if body is not None else cwd
        if kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            self.redirect(node, cwd)
            return cwd
        if kind == "pipeline":
            return self.pipeline(node, cwd)
        if kind in ("subshell", "command_substitution", "process_substitution"):
            self.walk_children(node, cwd)
            return cwd  # a subshell's cd stays in it
        if kind == "variable_assignment":
            self.assign(node, cwd)
            return cwd
        if kind == "declaration_command":
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self.assign(child, cwd)
            return cwd
        if kind == "function_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                self.walk(body, cwd)
            return cwd
        if kind == "for_statement":
            for k, child in enumerate(node.children):
                field = node.field_name_for_child(k)
                if field == "variable":
                    self.vars[self.src(child)] = None
                elif field == "value":
                    self.word(child, cwd)  # walks the substitutions in it
                elif child.is_named:
                    cwd = self.walk(child, cwd)
            return cwd
        if kind == "ERROR":
            self.text(self.src(node), cwd)
            return cwd
        if kind in (
            "word",
            "string",
            "raw_string",
            "concatenation",
            "simple_expansion",
            "expansion",
            "number",
            "comment",
            "heredoc_body",
            "heredoc_start",
            "heredoc_end",
            "variable_name",
        ):
            if kind in ("string", "concatenation", "expansion"):
                self.word(node, cwd)  # walks substitutions in it
            return cwd
        return self.walk_children(node, cwd)  # program, list, if/while/case bodies, test_command, negated_command, ...

    def assign(self, node: Node, cwd: str | None) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        key = self.src(name)
        if value is None:
            self.vars[key] = ""
            return
        w = self.word(value, cwd)
        self.vars[key] = w.text if w.known and not w.glob else None

    def redirect(self, node: Node, cwd: str | None) -> None:
        if node.type == "heredoc_redirect":
            for child in node.named_children:
                if child.type == "file_redirect":
                    self.redirect(child, cwd)
            return
        if node.type == "herestring_redirect":
            for child in node.named_children:
                self.word(child, cwd)
            return
        op = next((c.type for c in node.children if not c.is_named), "")
        dest = node.child_by_field_name("destination")
        if dest is None:
            return
        w = self.word(dest, cwd)
        if op in _OUT_REDIRECTS and not (op in (">&", "<&") and w.known and (w.text.isdigit() or w.text == "-")):
            self.name(w, cwd)

    def pipeline(self, node: Node, cwd: str | None) -> str | None:
        stages = list(node.named_children)
        for k, stage in enumerate(stages):
            fed = self.walk_stage(stage, cwd)
            if fed and k > 0:
                # This stage runs what the ones before it print (``| sh``, ``| xargs rm``): their
                # text is all there is to judge.
                before = " ".join(self.src(s) for s in stages[:k])
                self.text(before, cwd)
        return cwd

    def walk_stage(self, stage: Node, cwd: str | None) -> bool:
        """Walk one pipeline stage; True when it runs its input as commands or operands."""
        outer = self._fed
        self._fed = False
        self.walk(stage, cwd)
        fed = self._fed
        self._fed = outer
        return fed

    _fed = False

    def command(self, node: Node, cwd: str | None, redirects: list[Node]) -> str | None:
        for r in redirects:
            self.redirect(r, cwd)
        words: list[tuple[Node, _Word]] = []
        for child in node.children:
            field = node.field_name_for_child(node.children.index(child))
            if child.type == "variable_assignment":
                self.assign(child, cwd)
                continue
            if child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                self.redirect(child, cwd)
                continue
            if field == "name":
                target = child.named_children[0] if child.named_children else child
                words.append((target, self.word(target, cwd)))
            elif child.is_named and child.type not in ("comment",):
                words.append((child, self.word(child, cwd)))
        heredoc = self._heredoc(node, redirects)
        return self.simple(words, cwd, heredoc)

    def _heredoc(self, node: Node, redirects: list[Node]) -> str | None:
        for r in redirects:
            if r.type == "heredoc_redirect":
                body = next((c for c in r.named_children if c.type == "heredoc_body"), None)
                if body is not None:
                    return self.src(body)
        parent = node.parent
        if parent is not None and parent.type == "redirected_statement":
            return self._heredoc(parent, [c for c in parent.named_children if c.type == "heredoc_redirect"]) if redirects == [] else None
        return None

    def simple(self, words: list[tuple[Node, _Word]], cwd: str | None, heredoc: str | None) -> str | None:
        argv = [w for _, w in words]
        if not argv:
            return cwd
        argv, fed = _peel(argv)
        if fed:
            self._fed = True
        if not argv:
            return cwd
        head = argv[0]
        if not head.known:
            # The command's own name is computed: it may be anything, vaultctl included.
            raw = " ".join(w.text for w in argv)
            if _mentions_person_words(argv):
                self.out.vaultctl.append("(a command whose name the guard cannot resolve)")
            self.text(raw, cwd)
            for w in argv[1:]:
                self.name(w, cwd)
            return cwd
        name = os.path.basename(head.text)
        args = argv[1:]
        texts = [w.text for w in args]
        if name in ("cd", "pushd"):
            operands = [w for w in args if not w.text.startswith("-") or w.text == "-"]
            if not operands:
                return self.lookup("HOME") if name == "cd" else cwd
            target = operands[0]
            if not target.known or target.glob or target.text == "-":
                return None
            text = target.text
            if text == "~" or text.startswith("~/"):
                text = (self.lookup("HOME") or "~") + text[1:]
            if not text.startswith("/") and cwd is None:
                return None
            logical = os.path.normpath(os.path.join(cwd or "/", text))
            return os.path.realpath(logical)
        if name == "popd":
            return None
        # vaultctl behind anything, as a word of this command
        for k, w in enumerate(argv):
            base = os.path.basename(w.text)
            if base in VAULTCTL_NAMES or (base in ("-m",) and k + 1 < len(argv) and argv[k + 1].text == "vaultctl"):
                start = k + 2 if base == "-m" else k + 1
                if k > 0 and name in READ_ONLY and name not in ("env",):
                    break  # ``grep vaultctl notes.txt``: a word, not a command
                rest = [x.text for x in argv[start:]]
                command = vaultctl_command(rest)
                if command and not vaultctl_reads(command, rest):
                    self.out.vaultctl.append(" ".join(command))
                elif not command and any(not x.known for x in argv[start:]):
                    self.out.vaultctl.append("(a vaultctl command the guard cannot resolve)")
                break
        if name in VAULTCTL_NAMES:
            return cwd
        if name in SHELLS or name == "eval" or name == "busybox-sh":
            self.shell(name, args, cwd, heredoc)
            return cwd
        if INTERPRETERS.match(name):
            code = _code_of(args)
            if code is not None:
                self.text(code, cwd)
            if heredoc is not None:
                self.text(heredoc, cwd)
            if not code and not any(not t.startswith("-") for t in texts):
                self._fed = True  # the program comes on its input
        elif name in ("source", "."):
            pass  # runs a file's commands: named below
        if reads_only(name, texts):
            return cwd
        for w in args:
            if w.known and "=" in w.text:
                self.name(_Word(w.text.split("=", 1)[1], glob=w.glob), cwd)  # of=FILE, --work-tree=DIR
            if w.text.startswith("-") and w.known:
                continue
            self.name(w, cwd)
        if cwd is not None:
            if name in ACTS_ON_CWD or fed:
                self.out.paths.append(resolve(".", cwd))
            else:
                self.out.inside.append(cwd)
        return cwd

    def shell(self, name: str, args: list[_Word], cwd: str | None, heredoc: str | None) -> None:
        if name == "eval":
            if all(w.known for w in args):
                self.nested(" ".join(w.text for w in args), cwd)
            else:
                self.text(" ".join(w.text for w in args), cwd)
            return
        code: _Word | None = None
        k = 0
        files: list[_Word] = []
        while k < len(args):
            t = args[k].text
            if t in ("-c",) or (t.startswith("-") and not t.startswith("--") and "c" in t[1:] and args[k].known):
                code = args[k + 1] if k + 1 < len(args) else None
                break
            if not t.startswith("-") or not args[k].known:
                files.append(args[k])
                break
            k += 1
        if code is not None:
            if code.known:
                self.nested(code.text, cwd)
            else:
                self.text(code.text, cwd)
        elif heredoc is not None:
            self.nested(heredoc, cwd)
        elif not files:
            self._fed = True  # a script on its input
        for w in files:
            self.name(w, cwd)  # a script file: what it does is not seen here

    def nested(self, line: str, cwd: str | None) -> None:
        if self.depth >= MAX_DEPTH:
            self.text(line, cwd)
            return
        inner = _Walk(self.env, self.out, self.depth + 1)
        inner.vars = dict(self.vars)
        inner.line(line, cwd)

    def line(self, line: str, cwd: str | None) -> None:
        self.source = line.encode("utf-8", "surrogatepass")
        tree = _parse(self.source)
        root = tree.root_node
        if root.has_error:
            self.text(line, cwd)  # what the grammar cannot read is judged by its words
        self.walk(root, cwd)
        del tree


def _unescape(raw: str) -> str:
    return re.sub(r"\\(.)", r"\1", raw, flags=re.DOTALL)


def _mentions_person_words(argv: list[_Word]) -> bool:
    texts = {w.text for w in argv}
    return bool(texts & {"apply", "reject", "policy", "delete", "undo", "set", "setup", "new", "move"})


def _code_of(args: list[_Word]) -> str | None:
    for k, w in enumerate(args):
        if w.text in CODE_FLAGS or (w.text.startswith("-") and not w.text.startswith("--") and w.text[-1:] in ("c", "e", "E")):
            return " ".join(x.text for x in args[k + 1 : k + 2]) if k + 1 < len(args) else ""
    return None


def _peel(argv: list[_Word]) -> tuple[list[_Word], bool]:
    """The command proper, past wrappers (``timeout 60``, ``sudo -u x``, ``env A=1``, ``xargs -0``),
    and whether a wrapper feeds it operands nobody can see here (``xargs``)."""
    fed = False
    while argv and argv[0].known and os.path.basename(argv[0].text) in WRAPPERS:
        wrapper = os.path.basename(argv[0].text)
        if wrapper == "env" and len(argv) == 1:
            return argv, fed
        fed = fed or wrapper in ("xargs", "parallel")
        k = 1
        operand_taken = wrapper not in WRAPPER_OPERAND
        while k < len(argv):
            t = argv[k].text
            if not argv[k].known:
                break
            if t == "--":
                k += 1
                break
            if t.startswith("-"):
                k += 2 if t in WRAPPER_VALUES.get(wrapper, frozenset()) else 1
                continue
            if wrapper == "env" and "=" in t:
                k += 1
                continue
            if not operand_taken:
                operand_taken = True
                k += 1
                continue
            break
        argv = argv[k:]
    return argv, fed


def resolve(path: str, cwd: str) -> str:
    """``path`` as the kernel will find it: joined to ``cwd``, links resolved before ``..``."""
    joined = os.path.join(cwd, path.split("\x00", 1)[0])  # the kernel reads a name up to its first NUL
    try:
        return os.path.realpath(joined)
    except (ValueError, UnicodeEncodeError):
        return os.path.normpath(joined)  # a name no file system can hold: nothing to follow


def shell_writes(command: str, cwd: str, env: dict[str, str] | None = None) -> ShellWrites:
    """What ``command`` (a shell line, as a host's shell tool receives it) names, resolved against
    ``cwd``, and the ``vaultctl`` commands in it that act as the user."""
    env = dict(os.environ) if env is None else env
    out = ShellWrites()
    walk = _Walk(env, out)
    if len(command) > MAX_COMMAND_CHARS:
        out.refusals.append(f"the line is longer than {MAX_COMMAND_CHARS} characters, more than the guard reads")
        walk.text(command[:MAX_COMMAND_CHARS], cwd)
        return out
    walk.line(command, cwd)
    out.paths = list(dict.fromkeys(out.paths))
    out.inside = list(dict.fromkeys(out.inside))
    return out

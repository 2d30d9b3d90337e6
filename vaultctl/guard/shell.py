"""What a shell command line would write, read from its words, for the agent-host guard.

An agent that cannot edit a vault file with its host's edit tool could still run ``sed -i``,
``rm``, ``mv`` or ``echo ... > note.md`` through the host's shell tool. This module finds the
paths such a command line writes: redirection targets, the operands of commands that change the
files they name, the destination of copies, ``dd of=``, the working tree a mutating ``git``
command rewrites, and every ``vaultctl`` command that acts as the user (those run on the person's
channel, outside the agent gate).

It reads words, not programs: an interpreter told to write a file (``python -c``, ``node -e``)
is not seen, and neither is a path built at run time. The guard keeps an honest agent on the
safe path; it is not a sandbox, and docs/agents.md says so. A line the shell lexer cannot split
(an unclosed quote) is judged by every word that looks like a path, so it fails towards refusing.
"""

from __future__ import annotations

import os
import re
import shlex

#: Commands that change every file they name (besides options).
_CHANGES_OPERANDS = frozenset(
    {"rm", "rmdir", "unlink", "shred", "touch", "mkdir", "truncate", "chmod", "chown", "chgrp", "tee", "mv", "srm", "wipe"}
)
#: Commands that write only their last operand (or ``-t DIR``).
_WRITES_LAST = frozenset({"cp", "ln", "install", "rsync", "scp"})
#: Editors in place: their file operands change when ``-i`` is given; the first operand is the script.
_IN_PLACE = frozenset({"sed", "perl", "gsed"})
#: git subcommands that rewrite the working tree (commit and log only read it).
_GIT_REWRITES = frozenset(
    {
        "checkout",
        "switch",
        "restore",
        "reset",
        "clean",
        "stash",
        "pull",
        "merge",
        "rebase",
        "cherry-pick",
        "revert",
        "am",
        "apply",
        "mv",
        "rm",
    }
)
#: Words that run the rest of the line as a command of its own.
_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "exec", "nohup", "time", "nice", "ionice", "xargs", "builtin", "stdbuf"})
#: ``vaultctl`` commands that only read; every other one acts as the user.
_VAULTCTL_READS = frozenset(
    {
        ("status",),
        ("doctor",),
        ("schema",),
        ("search",),
        ("show",),
        ("links",),
        ("list",),
        ("tags",),
        ("stats",),
        ("issues",),
        ("ops",),
        ("mcp",),
        ("help",),
        ("proposals",),
        ("proposals", "show"),
        ("vault", "list"),
        ("daemon", "status"),
        ("daemon", "logs"),
        ("log", "tail"),
        ("log", "grep"),
    }
)
_GROUPS = frozenset({"vault", "proposals", "daemon", "log"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"})
MAX_COMMAND_CHARS = 256 * 1024  #: longer lines are judged by their path-like words alone


class ShellWrites:
    """What one command line would change. (A plain class: ``dataclasses`` costs a hook that runs
    before every tool call several milliseconds to import.)"""

    __slots__ = ("paths", "vaultctl")

    def __init__(self) -> None:
        self.paths: list[str] = []  #: absolute paths it writes or removes
        self.vaultctl: list[str] = []  #: ``vaultctl`` commands acting as the user, as typed

    def __repr__(self) -> str:
        return f"ShellWrites(paths={self.paths!r}, vaultctl={self.vaultctl!r})"


def _words(command: str) -> list[str] | None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        return None


def _split(words: list[str]) -> list[list[str]]:
    """Simple commands, split at operators; redirections stay with their command; a here-document's
    lines are its command's input, not commands."""
    commands: list[list[str]] = [[]]
    pending: list[str] = []  #: here-document delimiters whose bodies start at the next line
    i = 0
    while i < len(words):
        word = words[i]
        if word == "<<" and i + 1 < len(words):
            pending.append(words[i + 1].removeprefix("-"))  # <<-EOF strips tabs; the lexer keeps the '-' with the word
            commands[-1] += [word, words[i + 1]]
            i += 2
            continue
        if word == "\n" and pending:
            i = _past_bodies(words, i + 1, pending)
            pending = []
            commands.append([])
            continue
        if word in _SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(word)
        i += 1
    return [c for c in commands if c]


def _past_bodies(words: list[str], i: int, delimiters: list[str]) -> int:
    """The index after the here-document bodies that start at ``i``, one per delimiter."""
    for delimiter in delimiters:
        line: list[str] = []
        while i < len(words):
            word = words[i]
            i += 1
            if word != "\n":
                line.append(word)
                continue
            if line == [delimiter]:
                break
            line = []
        else:
            return i
    return i


def _resolve(word: str, cwd: str, env: dict[str, str]) -> str:
    expanded = _expand_vars(word, env)
    if (expanded == "~" or expanded.startswith("~/")) and env.get("HOME"):
        expanded = env["HOME"] + expanded[1:]
    return os.path.normpath(os.path.join(cwd, expanded))


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _expand_vars(word: str, env: dict[str, str]) -> str:
    """``$NAME`` and ``${NAME}`` from the hook's own environment ($HOME, $PWD, ...); a name it
    does not have stays as typed, which names no real folder."""
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), word)


def _operands(args: list[str]) -> list[str]:
    out: list[str] = []
    ended = False
    for arg in args:
        if not ended and arg == "--":
            ended = True
        elif ended or not arg.startswith("-") or arg == "-":
            out.append(arg)
    return [a for a in out if a != "-"]


_WATCHED = _CHANGES_OPERANDS | _WRITES_LAST | _IN_PLACE | {"dd", "git", "vaultctl", "find", "cd"}


def _strip_wrappers(words: list[str]) -> tuple[list[str], bool]:
    """The command proper, past ``VAR=value`` words and wrappers (``sudo -u x``, ``env``,
    ``xargs``), and whether ``xargs`` feeds it operands nobody can see here."""
    i = 0
    while i < len(words) and "=" in words[i] and not words[i].startswith(("=", "-")) and "/" not in words[i].split("=", 1)[0]:
        i += 1  # VAR=value before the command
    words = words[i:]
    if not words or os.path.basename(words[0]) not in _WRAPPERS:
        return words, False
    # A wrapper's own options may take values (sudo -u NAME, nice -n 5): the command is the first
    # word after it that this module watches; none means nothing here writes.
    fed = any(os.path.basename(w) == "xargs" for w in words)
    for k in range(1, len(words)):
        if os.path.basename(words[k]) in _WATCHED:
            return words[k:], fed
    return [], fed


def _vaultctl_command(args: list[str]) -> tuple[str, ...]:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return ()
    if words[0] in _GROUPS and len(words) > 1:
        return (words[0], words[1])
    return (words[0],)


def _vaultctl_reads(command: tuple[str, ...], args: list[str]) -> bool:
    if command == ("vault", "policy"):  # shows the policy when given only the vault id
        return len(_operands(args)) == 3 and all(a == "--json" for a in args if a.startswith("-"))
    if command == ("setup",):  # a dry run unless told to write
        return not any(a in ("--apply", "--undo") for a in args)
    return command in _VAULTCTL_READS


def _git_workdir(args: list[str], cwd: str, env: dict[str, str]) -> tuple[str, str | None]:
    """The folder git works in and its subcommand."""
    i = 0
    workdir = cwd
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            workdir = _resolve(args[i + 1], workdir, env)
            i += 2
            continue
        if args[i] in ("-c", "--git-dir", "--work-tree") and i + 1 < len(args):
            if args[i] == "--work-tree":
                workdir = _resolve(args[i + 1], workdir, env)
            i += 2
            continue
        i += 1
    return workdir, (args[i] if i < len(args) else None)


def _one(words: list[str], cwd: str, env: dict[str, str], out: ShellWrites) -> str:
    """Record what one simple command writes; return the working folder after it (``cd``)."""
    plain: list[str] = []
    i = 0
    while i < len(words):
        if words[i] in _REDIRECTS and i + 1 < len(words):
            out.paths.append(_resolve(words[i + 1], cwd, env))
            i += 2
            continue
        if words[i] in (">&", "<&", "<", "<<", "<<<") and i + 1 < len(words):
            i += 2  # a descriptor copy or an input: nothing written
            continue
        plain.append(words[i])
        i += 1
    plain, fed = _strip_wrappers(plain)
    if not plain:
        return cwd
    if fed and os.path.basename(plain[0]) != "vaultctl":
        out.paths.append(cwd)  # operands arrive on stdin: judge the folder they are named from
    name, args = os.path.basename(plain[0]), plain[1:]
    if name == "cd":
        folders = _operands(args)
        return _resolve(folders[0], cwd, env) if folders else env.get("HOME", cwd)
    if name == "vaultctl":
        command = _vaultctl_command(args)
        if command and not _vaultctl_reads(command, args):
            out.vaultctl.append(" ".join(command))
        return cwd
    operands = _operands(args)
    if name in ("chmod", "chown", "chgrp") and not any(a.startswith("--reference") for a in args):
        operands = operands[1:]  # the mode or owner
    if name == "truncate":
        operands = _operands([a for k, a in enumerate(args) if not (k > 0 and args[k - 1] in ("-s", "-r", "--size", "--reference"))])
    if name in _CHANGES_OPERANDS:
        out.paths += [_resolve(a, cwd, env) for a in operands]
    elif name in _WRITES_LAST:
        target = next((args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")), None)
        if target is None and len(operands) >= 2:
            target = operands[-1]
        if target is not None and ":" not in target.split("/", 1)[0]:  # host:path is another machine's
            out.paths.append(_resolve(target, cwd, env))
    elif name in _IN_PLACE and any(a.startswith("-i") or a.startswith("--in-place") or a.startswith("-pi") for a in args):
        script_flags = ("-e", "--expression", "-f", "--file")
        scripted = any(a in script_flags for a in args)
        files = _operands([a for k, a in enumerate(args) if not (k > 0 and args[k - 1] in script_flags)])
        files = files if scripted else files[1:]
        out.paths += [_resolve(a, cwd, env) for a in files]
    elif name == "find" and any(a in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint") for a in args):
        starts = [a for a in args if not a.startswith(("-", "(", ")", "!"))][:1] or ["."]
        out.paths += [_resolve(a, cwd, env) for a in starts]
    elif name == "dd":
        out.paths += [_resolve(a[3:], cwd, env) for a in args if a.startswith("of=")]
    elif name == "git":
        workdir, sub = _git_workdir(args, cwd, env)
        if sub in _GIT_REWRITES:
            out.paths.append(workdir)
    return cwd


def _pathlike(command: str, cwd: str, env: dict[str, str]) -> list[str]:
    """Every word that could name a file, for a line the lexer cannot split."""
    words = command.replace(">", " ").replace("<", " ").replace(";", " ").replace("|", " ").replace("&", " ").split()
    return [_resolve(w.strip("'\""), cwd, env) for w in words if "/" in w or w.endswith(".md")]


def shell_writes(command: str, cwd: str, env: dict[str, str] | None = None) -> ShellWrites:
    """The paths ``command`` (a shell line, as a host's shell tool receives it) would write,
    resolved against ``cwd``, and the ``vaultctl`` commands in it that act as the user."""
    env = dict(os.environ) if env is None else env
    out = ShellWrites()
    words = _words(command) if len(command) <= MAX_COMMAND_CHARS else None
    if words is None:
        out.paths = _pathlike(command[:MAX_COMMAND_CHARS], cwd, env)
        return out
    for simple in _split(words):
        cwd = _one(simple, cwd, env, out)
    return out

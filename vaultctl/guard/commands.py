"""What each shell command does to the paths it names, as the agent-host guard judges it.

The walker (:mod:`vaultctl.guard.shell`) finds the commands in a line; these tables say which of
them only read (and which of their options make them write after all), which run another command
(wrappers, shells, interpreters), which act on the folder they run in, and which ``vaultctl``
commands act as the person. A command not named here is taken to write every path it names.
"""

from __future__ import annotations

import re

#: Commands that only read, whatever their operands (the options that would make one write are
#: checked in :func:`_reads_only`).
READ_ONLY = frozenset(
    {
        "cat", "tac", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack",
        "ls", "tree", "stat", "file", "wc", "du", "df", "diff", "cmp", "comm", "md5sum", "sha1sum",
        "sha256sum", "sha512sum", "b2sum", "cksum", "realpath", "readlink", "basename", "dirname",
        "pwd", "echo", "printf", "test", "[", "true", "false", "which", "type", "whoami", "id",
        "date", "uname", "env", "printenv", "nl", "od", "hexdump", "xxd", "strings", "cut", "tr",
        "uniq", "column", "fold", "fmt", "jq", "yq", "bat", "batcat", "find", "fd", "fdfind",
        "sort", "sed", "awk", "gawk", "mawk", "git", "vaultctl", "cd", "pushd", "popd", "exit",
        "sleep", "seq", "expr", "getent", "locale", "hostname", "tput", "clear", "history", "wait",
        "jobs", "ps", "pgrep", "look", "join", "paste", "expand", "unexpand", "rev", "shuf"
    }
)  # fmt: skip
#: Commands that run the rest of their words as a command, and whose own words write nothing.
WRAPPERS = frozenset(
    {
        "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "ionice",
        "stdbuf", "timeout", "setsid", "chrt", "taskset", "unbuffer", "caffeinate", "busybox",
        "xargs", "parallel", "watch", "nocache", "catchsegv", "proxychains", "proxychains4", "torsocks",
    }
)  # fmt: skip
#: Wrapper options that take the next word as their value (``nice -n 5``, ``sudo -u NAME``).
WRAPPER_VALUES: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-U", "-r", "-t", "-T", "--user", "--group", "--host", "--prompt", "--chdir"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset(
        {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--max-args", "--max-procs", "--delimiter", "--arg-file", "--max-lines"}
    ),
    "parallel": frozenset({"-j", "-S", "--jobs", "--sshlogin"}),
    "watch": frozenset({"-n", "--interval", "-d"}),
    "chrt": frozenset(),
    "taskset": frozenset(),
}
#: Wrappers whose first operand is theirs (a duration, a priority, a mask), not the command.
WRAPPER_OPERAND = frozenset({"timeout", "chrt", "taskset"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "rbash"})
INTERPRETERS = re.compile(
    r"^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node|nodejs|deno|bun|php[0-9.]*|lua[0-9.]*|osascript|tclsh|R|Rscript|julia|pwsh|powershell)$"
)
#: Commands that act on the folder they run in when no folder is named (``git clean``, ``tar x``).
ACTS_ON_CWD = frozenset(
    {"git", "find", "tar", "unzip", "patch", "curl", "wget", "rsync", "make", "cpio", "7z", "bsdtar", "pax", "xargs", "parallel"}
)
#: git subcommands that only read (``--output`` and ``-o`` are checked too).
_GIT_READS = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "grep",
        "ls-files",
        "ls-tree",
        "rev-parse",
        "describe",
        "shortlog",
        "cat-file",
        "rev-list",
        "whatchanged",
        "reflog",
        "help",
        "version",
        "annotate",
        "name-rev",
        "merge-base",
        "count-objects",
        "for-each-ref",
        "show-ref",
        "var",
        "check-ignore",
        "ls-remote",
    }
)
#: ``vaultctl`` commands that only read; every other one acts as the user.
VAULTCTL_READS = frozenset(
    {
        ("status",), ("doctor",), ("schema",), ("search",), ("show",), ("links",), ("list",),
        ("tags",), ("stats",), ("issues",), ("ops",), ("mcp",), ("help",), ("guard",),
        ("proposals",), ("proposals", "show"), ("proposals", "list"), ("vault", "list"),
        ("daemon", "status"), ("daemon", "logs"), ("log", "tail"), ("log", "grep"),
    }
)  # fmt: skip
_GROUPS = frozenset({"vault", "proposals", "daemon", "log"})
VAULTCTL_NAMES = frozenset({"vaultctl", "vaultctl.pyz"})


def vaultctl_command(args: list[str]) -> tuple[str, ...]:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return ()
    if words[0] in _GROUPS and len(words) > 1:
        return (words[0], words[1])
    return (words[0],)


def _operands(args: list[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def vaultctl_reads(command: tuple[str, ...], args: list[str]) -> bool:
    if command == ("vault", "policy"):  # shows the policy when given only the vault id
        return len(_operands(args)) == 3 and all(a == "--json" for a in args if a.startswith("-"))
    if command == ("setup",):  # a dry run unless told to write
        return not any(a in ("--apply", "--undo") for a in args)
    return command in VAULTCTL_READS


_FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"})


def reads_only(name: str, args: list[str]) -> bool:
    """Is this a command known only to read, given its options?"""
    if name not in READ_ONLY:
        return False
    if name == "find":
        return not any(a in _FIND_ACTIONS for a in args)
    if name in ("fd", "fdfind"):
        return not any(a in ("-x", "--exec", "-X", "--exec-batch") for a in args)
    if name == "sort":
        return not any(a == "-o" or a.startswith(("-o", "--output")) for a in args)
    if name == "sed":
        if any(a.startswith(("-i", "--in-place")) or (a.startswith("-") and not a.startswith("--") and "i" in a[1:]) for a in args):
            return False
        scripts = [a for a in args if not a.startswith("-")][:1]
        return not any(re.search(r"[wWe]", s) for s in scripts)  # w FILE and e CMD write and run
    if name in ("awk", "gawk", "mawk"):
        if any(a.startswith("-i") or a in ("--include", "-f") for a in args):
            return False
        return not any(re.search(r">|\||system|getline|close|fflush", a) for a in args)
    if name == "git":
        sub = next((a for a in _git_sub(args)), None)
        if sub is None or sub not in _GIT_READS:
            return sub is None and not args
        return not any(a.startswith(("--output", "-o", "--ext-diff", "--textconv")) or a == "-O" for a in args)
    if name == "rg":
        return not any(a.startswith("--pre") for a in args)
    if name == "tree":
        return not any(a == "-o" for a in args)
    if name in ("less", "more"):
        return True
    if name == "env":
        return all("=" in a or a.startswith("-") for a in args) and not any(a in ("-S", "--split-string", "-C", "--chdir") for a in args)
    if name in ("jq", "yq"):
        return not any(a in ("-i", "--inplace") for a in args)
    return True


def _git_sub(args: list[str]) -> list[str]:
    """git's subcommand, past its global options (``-C DIR``, ``-c k=v``)."""
    k = 0
    while k < len(args):
        a = args[k]
        if a in ("-C", "-c", "--git-dir", "--work-tree", "--namespace"):
            k += 2
            continue
        if a.startswith("-"):
            k += 1
            continue
        return [a]
    return []

"""The man page ``docs/man/vaultctl.1``, generated from the commands like the CLI reference.

Every command with its help, usage line, arguments and options comes from the same click tree
(:mod:`scripts.cli_reference`), so ``man vaultctl`` and ``vaultctl COMMAND --help`` cannot
disagree. The exit statuses come from :class:`protocol.errors.ExitStatus`, the environment from
the names the client reads. ``python -m scripts.docs`` (``make docs``) writes it; ``--check``
fails when it is stale. Read it with ``man -l docs/man/vaultctl.1``.
"""

from __future__ import annotations

from protocol.errors import ExitStatus
from protocol.version import VERSION
from scripts.cli_reference import Entry, entries, root

EXIT_STATUSES: dict[ExitStatus, str] = {
    ExitStatus.OK: "The command did what it was asked.",
    ExitStatus.REFUSED: "Refused: not found, ambiguous, validation, policy, a limit, a lock; nothing was written.",
    ExitStatus.USAGE: "The command line itself is wrong: an unknown option, a missing argument, a value out of its bounds.",
    ExitStatus.UNAVAILABLE: "No daemon answered (or it is not the user's own); nothing was sent.",
    ExitStatus.INTERNAL: "An internal error; VAULTD_DEBUG=1 prints the traceback.",
    ExitStatus.CONFLICT: "A note changed since it was read, or a preview went stale: read again, then retry.",
}

ENVIRONMENT = (
    ("VAULTD_VAULT", "The vault a command uses when --vault is not given."),
    ("VAULTD_HOME", "The daemon's home (config.json, indexes, logs); default $XDG_DATA_HOME/vaultd, else ~/.local/share/vaultd."),
    ("VAULTD_SOCKET", "The daemon's socket; default $XDG_RUNTIME_DIR/vaultd/vaultd.sock, else in the home."),
    ("VAULTD_NO_AUTOSTART", "Set to 1: never start a daemon when none answers."),
    ("VAULTD_CLIENT_TIMEOUT", "Seconds to wait for each reply (default 60)."),
    ("VAULTD_DEBUG", "Set to 1: an internal error prints its traceback."),
    ("VAULTD_PAGER, PAGER", "The pager for long output on a terminal (default less, with LESS=FRX); cat: none."),
    ("NO_COLOR", "Set and not empty: no colour unless --color always."),
    ("TERM", "dumb: no colour unless --color always."),
    ("COLUMNS", "The width text is wrapped to; by default the terminal's, and none for a pipe."),
)


def roff(text: str) -> str:
    """``text`` safe in a roff line: backslashes and hyphens escaped, no control word at a line start."""
    out = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in out.splitlines())


def _section(entry: Entry) -> list[str]:
    lines = [f".SS {roff(entry.path)}"]
    for verbatim, text in entry.help_paragraphs():
        lines += [".PP", ".nf", roff(text), ".fi"] if verbatim else [".PP", roff(text)]
    lines += [".PP", f"Usage: \\fB{roff(entry.usage())}\\fR"]
    for declaration, meaning in entry.params():
        lines += [".TP", f"\\fB{roff(declaration)}\\fR", roff(" ".join(meaning.split()))]
    return lines


def render() -> str:
    top = root()
    lines = [
        f'.TH VAULTCTL 1 "" "vaultd {VERSION}" "User Commands"',
        ".SH NAME",
        "vaultctl \\- keep Obsidian\\-compatible Markdown vaults through the vaultd daemon",
        ".SH SYNOPSIS",
        f"\\fB{roff(top.usage())}\\fR",
        ".SH DESCRIPTION",
        roff(
            "vaultctl is the command line client of vaultd, the per-user daemon that owns your vaults: "
            "every command is one call over the daemon's socket, and the daemon is started when none "
            "answers. Commands print text for people and --json for scripts. "
            "'vaultctl help COMMAND' prints a command's help; 'vaultctl completion bash|zsh|fish' "
            "prints a shell completion script."
        ),
        ".SH OPTIONS",
    ]
    for declaration, meaning in top.params():
        lines += [".TP", f"\\fB{roff(declaration)}\\fR", roff(" ".join(meaning.split()))]
    lines.append(".SH COMMANDS")
    for entry in entries():
        lines += _section(entry)
    lines.append(".SH EXIT STATUS")
    for status in ExitStatus:
        lines += [".TP", f"\\fB{int(status)}\\fR", roff(EXIT_STATUSES[status])]
    lines += [".TP", "\\fB141\\fR", roff("Standard output was closed early (vaultctl list | head), as after SIGPIPE.")]
    lines.append(".SH ENVIRONMENT")
    for name, meaning in ENVIRONMENT:
        lines += [".TP", f"\\fB{roff(name)}\\fR", roff(meaning)]
    lines += [
        ".SH FILES",
        ".TP",
        "\\fI$VAULTD_HOME/config.json\\fR",
        roff("The registered vaults and their policies."),
        ".TP",
        "\\fI<vault>/.vaultd/\\fR",
        roff("A vault's lock and journal (git-ignored)."),
        ".SH SEE ALSO",
        roff("vaultd's docs/cli.md and docs/reference/cli.md, generated from the same commands as this page."),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")

"""The catalogue of issue codes: what each ``Issue.code`` means and what to do about it.

An error names what kind of refusal a call met (:class:`~protocol.errors.ErrorCode`); its issues
name the rules, by these codes. The letter says where the rule lives: ``S`` a file the index
skipped, ``N`` a note's frontmatter as read, ``P`` a vault policy, ``G`` the agent gate (what an
agent may apply, propose or not do at all), ``R`` the vault's git repository and its remote,
``V`` a write's validation, ``O`` Obsidian's settings and templates, ``T`` a tidy rule (what
``vault.tidy`` changes in a vault written by an older, unvalidated writer).
``Issue.code`` stays a string on the wire, so an older client still reads a code added later;
every code the daemon emits is one of these (a test holds the source to that), and the
reference docs list them from here.
"""

from __future__ import annotations

import enum

from protocol.limits import MAX_NOTE_BYTES, describe


class IssueCode(enum.StrEnum):
    """One rule. ``meaning`` says what was found, ``action`` what the caller can do about it."""

    meaning: str
    action: str

    def __new__(cls, value: str, meaning: str, action: str) -> IssueCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        member.action = action
        return member

    PARAM = (
        "PARAM",
        "A params field has the wrong type, is unknown, or is out of its bounds.",
        "Fix the field at the issue's path; the method's schema gives its type and bounds.",
    )

    S01 = (
        "S01",
        f"The file is over the {describe(MAX_NOTE_BYTES)} note bound, so it is not indexed.",
        "Split it into smaller notes, or keep it outside the vault.",
    )
    S02 = ("S02", "The file is not valid UTF-8, so it is not indexed.", "Convert it to UTF-8.")
    S03 = ("S03", "The file holds NUL bytes: a binary file with a .md name.", "Rename or remove it.")
    S04 = ("S04", "A symbolic link; links are never followed.", "Replace it by the file it points to, if it belongs here.")
    S05 = ("S05", "The file or folder could not be opened, read or listed.", "Check its permissions.")
    S06 = ("S06", "Not a regular file (a FIFO, socket or device).", "Remove it from the vault.")
    S07 = ("S07", "The name is not valid UTF-8, so the note cannot be named in a call.", "Rename it.")

    N01 = (
        "N01",
        "The frontmatter is malformed YAML, uses a YAML tag, nests too deep or holds an unreadable value.",
        "Rewrite it as a plain mapping of keys to strings, numbers, booleans, dates and lists.",
    )
    N02 = ("N02", "The frontmatter is not a mapping of keys to values.", "Make it one `key: value` per line.")
    N03 = ("N03", "The frontmatter repeats a key.", "Keep one of the repeated keys.")
    N04 = ("N04", "The frontmatter uses YAML anchors or aliases, which are not read.", "Write the values out in full.")
    N05 = ("N05", "The frontmatter header is over its size bound.", "Move long values into the note's body.")
    N06 = ("N06", "The frontmatter header has no closing '---' line.", "Add the closing line, or remove the opening one.")

    P01 = (
        "P01",
        "The vault's write policy refuses writes from this channel.",
        "Write through a channel the policy allows, or change it with 'vaultctl vault add'.",
    )
    P02 = ("P02", "The path matches one of the vault's deny_paths globs.", "Choose another path.")
    P03 = ("P03", "A PII pattern in the vault's policy is invalid or repeated.", "Fix the pattern in the vault's policy.")
    P04 = (
        "P04",
        "The path is private to the CLI: agents can neither see nor write it.",
        "Choose another path, or make the change from the CLI.",
    )
    P05 = (
        "P05",
        "The path is vaultd's own: the vault's operation log (or a file starting with its header line), or a file inside "
        "a .vaultd or .git folder. Only vaultd writes them; no write method creates, edits, moves or removes them.",
        "Record an event with log_append ('vaultctl log append'). To keep a note at the log's path, give the vault another "
        "log path (its log_path setting, 'vaultctl vault add ID PATH --log-path vaultd-log.md').",
    )
    P06 = (
        "P06",
        "The path is in a folder the vault keeps for its user (a user-only or journal folder): agents may not write there.",
        "Ask your user to make the change, or write elsewhere.",
    )
    P20 = (
        "P20",
        "An agent may capture only files inside the vault or content it sends; the daemon reads a file outside the vault "
        "for a person only, and never the vault's .vaultd, .git, .obsidian or .trash folders.",
        "Ask your user to run 'vaultctl capture FILE', or send the content itself.",
    )

    G01 = (
        "G01",
        "The vault's agent policy holds this operation for a person: applying it makes a proposal, not a change.",
        "Tell your user; they review it with 'vaultctl proposals show ID' and apply or reject it.",
    )
    G02 = (
        "G02",
        "The vault's agent policy refuses this operation to agents.",
        "Ask your user to do it; a person can change the policy with 'vaultctl vault policy ID'.",
    )
    G03 = (
        "G03",
        "Applying the proposal now would not write what it showed: a file it read changed after it was proposed, or "
        "the same operation planned again writes other bytes (a name or alias it resolved now names another note).",
        "Nothing was written; propose the change again on the current notes, and review it again.",
    )

    R01 = (
        "R01",
        "The change was applied but not committed: your git staging area holds changes in the vault's paths, and vaultd "
        "never commits what you staged.",
        "Commit or unstage them (git restore --staged PATH); the next operation or snapshot commits what is pending.",
    )
    R02 = (
        "R02",
        "The operation is older than the journal vaultd keeps for undo, but git history records it.",
        "Preview its reversal as a new operation with op.revert ('vaultctl revert OP_ID').",
    )
    R03 = (
        "R03",
        "The change was applied but its commit could not be made (git failed or the repository is busy).",
        "See 'vaultctl doctor'; the next operation commits what is pending.",
    )
    R04 = (
        "R04",
        "A note changed both here and on the remote did not merge; both versions are kept in a proposal and origin's is in the vault.",
        "Review it with 'vaultctl proposals show ID', then apply it (both versions, for you to finish) or reject it.",
    )
    R05 = (
        "R05",
        "The remote is not the registered one: origin's fetch or push URL differs, or a url.insteadOf rewrite applies, so the "
        "real destination cannot be verified.",
        "Set origin's URLs to the registered remote ('git remote set-url'), remove the rewrite, or change the vault's remote "
        "with 'vaultctl vault git'.",
    )
    R06 = (
        "R06",
        "The remote branch was rewritten (force-pushed) since the last sync; vaultd never integrates or overwrites rewritten "
        "shared history.",
        "Find out who rewrote it and restore the commits on the remote, then sync again.",
    )
    R07 = (
        "R07",
        "A link in the promoted note names no note of the org vault, so it became plain text in the copy.",
        "Promote the linked note first if the org should have it, or keep the link as text.",
    )
    R08 = (
        "R08",
        "Origin's commits hold something vaultd refuses to integrate: a path git itself refuses (.git in any case or spelling, "
        "'..'), a path the vault's write rules refuse (a case twin of an existing file, vaultd's or Obsidian's trash folder, a "
        "name the path screen refuses), or a file over its size bound. Nothing was integrated; the branch, the index and the "
        "files are as they were.",
        "Ask whoever pushed it to remove or rename the file on origin in a new commit, then sync again.",
    )
    R09 = (
        "R09",
        "The repository's own git config names a command git runs (a filter, a hook folder, an ssh command, a credential "
        "helper...) or sends data elsewhere. vaultd never runs it; your own git in this folder does.",
        "If you did not put it there, remove it: git config --unset KEY (see 'git config --list --show-origin').",
    )

    V01 = (
        "V01",
        "The frontmatter breaks the vault's schema, or cannot be edited in place.",
        "Correct the frontmatter as the message says, then retry.",
    )
    V02 = ("V02", "A frontmatter key or value in the params is unusable.", "Fix the named key or value.")
    V03 = (
        "V03",
        "The change would leave a dead or ambiguous link (a new link to no note yet only warns in the open profile).",
        "Link to an existing note by a unique name, or create the target first.",
    )
    V04 = (
        "V04",
        "The path is not a safe note path (for example '..', a control character, a reserved name, or a case or Unicode collision).",
        "Choose another path.",
    )
    V05 = ("V05", "A section a merge must combine holds more than a list.", "Move the other text to another section, then merge.")
    V06 = (
        "V06",
        "The text or path looks like a secret (a key, a token, a password); it is never written.",
        "Remove the secret; keep secrets out of notes.",
    )
    V07 = ("V07", "The text holds personal data the vault's PII policy refuses.", "Remove it, or change the vault's PII policy.")
    V08 = (
        "V08",
        "The destination already exists (also under another case or Unicode form).",
        "Choose another name, or edit the existing note.",
    )
    V09 = (
        "V09",
        "The content or log line is not usable: not UTF-8, too long, a bad field, or a log path that is a note of the user's.",
        "Fix the named field or path.",
    )
    V10 = (
        "V10",
        "The supersession would contradict an existing one (a cycle, or a note already superseded).",
        "Check which note is the newer one and swap them if needed.",
    )
    V11 = (
        "V11",
        "The change would close a cycle in the topic map: a note would become its own ancestor through its parent properties (up).",
        "Link the other way, or remove a parent; cycles that exist already only warn (lint L16).",
    )
    V12 = (
        "V12",
        "The new note name is another note's too: the links that name that note bare ([[Name]]) would turn ambiguous.",
        "Choose another name, or write those links with the folder path; the typed profile refuses the name, the open one warns.",
    )
    V16 = (
        "V16",
        "A note's domain is not one of the vault's: the built-ins (ai-practice, operations, people, projects, research, "
        "teaching) and those it declares.",
        "Use one of them, or declare the domain: 'vaultctl vault set ID --domain NAME' (at most 16).",
    )
    V17 = (
        "V17",
        "The file is in the vault's raw folder: a raw copy is kept as captured, never changed, moved or removed by a write.",
        "Capture the new version as a new source; undo the capture that wrote it to take it back.",
    )
    V18 = (
        "V18",
        "A log event names a project the vault's project registry does not declare.",
        "Name a declared project (the message lists them) or '-', or declare it: 'vaultctl vault set ID --project NAME'.",
    )
    V19 = (
        "V19",
        "The new note mentions a name one of the vault's canonical tables lists (a hint, never a refusal).",
        "Check the named row: link its note or use its canonical name rather than coining another.",
    )
    V26 = (
        "V26",
        "A canonical table the vault names told nothing: its note is missing, unreadable or over a bound, holds no table, "
        "or the tables' bounds were reached.",
        "Fix the note, or change the vault's tables: 'vaultctl vault set ID --canon-table NOTE[#COLUMN]' or --no-canon-tables.",
    )
    V20 = (
        "V20",
        "A ledger note (ledger: source or claim) has a field without its shape: an unknown state, a bad hash, a missing claim or page.",
        "Correct the named field as the message says (docs/sources.md lists the ledger keys).",
    )
    V21 = (
        "V21",
        "An accepted claim has no current support: no active, non-synthetic, unexpired source whose raw copy is as captured.",
        "Leave the claim proposed (unsupported is a valid state), or cite a current source.",
    )
    V22 = (
        "V22",
        "An accepted high-risk claim has fewer than two lines of current support with distinct independence keys.",
        "Cite a second, independent source, or lower the risk, or leave the claim proposed.",
    )
    V23 = (
        "V23",
        "A claim cites something that is not a source note: an invented citation.",
        "Capture the source first (vaultctl capture), then cite its note; or drop the citation.",
    )
    V24 = (
        "V24",
        "A reference identifier is malformed (DOI, arXiv id, citekey), a DOI is not lowercase, or a citekey is already used.",
        "Fix the identifier; choose another citekey (they are unique ignoring case).",
    )
    V25 = (
        "V25",
        "A content-addressed raw copy does not hold the bytes its name says: it was changed after capture.",
        "Restore the raw copy (or move it away), then capture again; 'vaultctl evidence' lists drifted sources.",
    )
    V30 = (
        "V30",
        "The file is not valid for its kind: a canvas that is not JSON Canvas 1.0, a base that is not Bases YAML.",
        "Fix the content as the message says; Obsidian would not open the file as written.",
    )
    O01 = (
        "O01",
        "The template holds Templater commands (<% ... %>), which vaultd does not run: they were inserted as written.",
        "Run the template with Templater in Obsidian, or remove the commands from the note.",
    )
    O02 = (
        "O02",
        "A date format in the vault's Obsidian settings or in a template uses a moment.js token vaultd does not support, "
        "or gives no usable name.",
        "Change the format in Obsidian's settings (or the template) to the supported tokens docs/obsidian.md lists.",
    )
    V13 = (
        "V13",
        "A typed note's topics name no map of content (a note of type moc) in the vault.",
        "Name an existing map of content in topics, or create the map first; a name the note already had only warns.",
    )
    V14 = (
        "V14",
        "A typed note's frontmatter topics and its body's '## Topics' list disagree, or the list is not the note's last section.",
        "Make the '## Topics' list name the same maps as topics, as the last section; note.set_frontmatter keeps them in step.",
    )
    V15 = (
        "V15",
        "The new note's title is close to an existing note's: it may be a duplicate (a hint, never a refusal).",
        "Check the named notes; extend one of them instead if it holds the same idea.",
    )
    T01 = (
        "T01",
        "tidy escapes: a frontmatter value written with YAML escapes (such as \\u00e9) or a trailing-backslash line wrap.",
        "vault.tidy re-emits it as a plain single-line value with literal characters; the value read is unchanged.",
    )
    T02 = (
        "T02",
        "tidy enums: a confidence, status or type spelled the old way (confirmed, observed, possible, two values joined, letter case).",
        "vault.tidy maps it to the schema's value; a value with no sure mapping is reported and kept for a person.",
    )
    T03 = (
        "T03",
        "tidy keys: a renamed or retired frontmatter key (date, record_date, alias, decided_date, related, priority...).",
        "vault.tidy renames it (date → created, alias → aliases), moves links to '## Relevant Notes' and paths to source, "
        "or drops it (its value is listed in the preview); any other key is reported and kept.",
    )
    T04 = (
        "T04",
        "tidy sources: a source path with the old workspace prefix (work/), or several paths joined in one string.",
        "vault.tidy strips the prefix and splits joined workspace paths into a list; URLs and mem: ids are never split.",
    )
    T05 = (
        "T05",
        "tidy topics: a note whose frontmatter topics have no '## Topics' section in the body.",
        "vault.tidy appends the section listing the topics; a section that disagrees with them is reported, not rewritten.",
    )
    T06 = (
        "T06",
        "tidy connections: an old '## Connections (...)' section where links belong under '## Relevant Notes'.",
        "vault.tidy folds its lines into '## Relevant Notes' (made where absent), each link once.",
    )
    T07 = (
        "T07",
        "tidy secrets: a secret already written in a note (a key, a token, a password); the record names rule, file and line only.",
        "vault.tidy replaces it by [redacted] (a frontmatter field's whole value); rotate the secret: git history and backups keep it.",
    )
    T08 = (
        "T08",
        "tidy log: a secret in a line of the vault's operation log.",
        "vault.tidy replaces it by [redacted] in the log; a redaction of the log is never undone. Rotate the secret.",
    )
    G04 = (
        "G04",
        "A returned checkout's copy and the note itself changed the same lines since it was checked out: the note's "
        "text is kept and the copy's is not written.",
        "Read both sides in the proposal's warnings; carry what the copy adds into the note by hand, or check it out again.",
    )
    G05 = (
        "G05",
        "Agents may not write in a journal volume's folder nor publish its edition: the entries and their editions are a person's.",
        "Ask your user; an agent may read a volume's entries.",
    )
    G06 = (
        "G06",
        "One link of a wikify proposal: a mention of another note, and the link that would replace it.",
        "Accept the links you want by number ('vaultctl wikify accept ID N...'), or apply or reject the proposal whole.",
    )

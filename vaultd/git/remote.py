"""The vault's remote: origin must be exactly the registered one, for fetching and for pushing.

A push goes where git's config says, after every ``url.<base>.insteadOf`` and ``pushInsteadOf``
rewrite; a rewrite (in the repository's config or the person's) can send a vault's notes anywhere.
So vaultd refuses to sync when a rewrite applies to origin at all, and when any of origin's
effective fetch or push URLs differs from the registered ``remote``. The check reads config only
(no network) and is run again right before each push.

URLs are compared after normalising what names the same place differently: scheme and host case,
credentials, a trailing slash, and for host remotes a trailing ``.git``; ``host:path`` is
``ssh://host/path``. Local paths keep their case and their ``.git`` (``x`` and ``x.git`` are two
repositories) and are compared as absolute paths.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from protocol.errors import Issue
from protocol.issue_codes import IssueCode
from vaultd.errors import PolicyRefused
from vaultd.git import command

if TYPE_CHECKING:
    from vaultd.git.repo import Repo

REMOTE = "origin"
_SCP = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>(?!//).*)$")


def normalize(url: str, base: str) -> str:
    """A canonical spelling of ``url`` (relative local paths are resolved against ``base``)."""
    if "://" in url:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme == "file":
            return _local(parts.path, base)
        host = (parts.hostname or "").lower()
        port = f":{parts.port}" if parts.port else ""
        return f"{scheme}://{host}{port}/{_tidy(parts.path)}"
    scp = _SCP.match(url)
    if scp and not url.startswith(("/", ".", "~")):
        return f"ssh://{scp['host'].lower()}/{_tidy(scp['path'])}"
    return _local(url, base)


#: Transports vaultd syncs over, by the scheme a remote's URL names (git's protocol names).
_TRANSPORTS = {"file": "file", "ssh": "ssh", "git+ssh": "ssh", "ssh+git": "ssh", "git": "git", "http": "http", "https": "https"}


def transport(url: str) -> str | None:
    """The one transport git may use to reach ``url`` (``protocol.<name>.allow``), or None when
    it is none vaultd syncs over (a remote helper's ``name::address``, ``ext::``...)."""
    if "::" in url.split("/", 1)[0]:
        return None
    if "://" in url:
        return _TRANSPORTS.get(url.split("://", 1)[0].lower())
    if _SCP.match(url) and not url.startswith(("/", ".", "~")):
        return "ssh"
    return "file"


def _tidy(path: str) -> str:
    path = path.strip("/")
    return path[:-4] if path.endswith(".git") else path


def _local(path: str, base: str) -> str:
    return os.path.normpath(os.path.join(base, os.path.expanduser(path))).rstrip("/") or "/"


@dataclass(frozen=True, slots=True)
class Urls:
    fetch: list[str]  #: origin's URLs as git will fetch from them (rewrites expanded)
    push: list[str]  #: and push to them
    rewrites: list[str]  #: rewrite rules that apply to origin's configured URLs


def _config(repo: Repo, *args: str) -> list[str]:
    out = command.run(repo.top, "config", *args, ok=(0, 1))
    return out.text.splitlines() if out.status == 0 else []


def origin_urls(repo: Repo) -> Urls | None:
    """Origin's URLs, or None when the repository has no origin."""
    fetch = command.run(repo.top, "remote", "get-url", "--all", REMOTE, ok=(0, 2, 128))
    if fetch.status != 0:
        return None
    push = command.run(repo.top, "remote", "get-url", "--push", "--all", REMOTE).text.splitlines()
    raw = _config(repo, "--get-all", f"remote.{REMOTE}.url") + _config(repo, "--get-all", f"remote.{REMOTE}.pushurl")
    rules = [ln.split(" ", 1) for ln in _config(repo, "--get-regexp", r"^url\..*\.(pushinsteadof|insteadof)$")]
    applying = [key for key, prefix in (r for r in rules if len(r) == 2) if any(u.startswith(prefix) for u in raw)]
    return Urls(fetch=fetch.text.splitlines(), push=push, rewrites=applying)


def problems(repo: Repo, registered: str | None) -> list[Issue]:
    """Why syncing with this repository's origin is refused (nothing when all is in order)."""
    if registered is None:
        return [Issue(code=IssueCode.R05, message="the vault has no registered remote; set one with 'vaultctl vault git ID --remote URL'")]
    urls = origin_urls(repo)
    if urls is None:
        return [Issue(code=IssueCode.R05, message=f"the repository has no remote '{REMOTE}'; add it: git remote add {REMOTE} {registered}")]
    found: list[Issue] = []
    if urls.rewrites:
        found.append(
            Issue(
                code=IssueCode.R05,
                message=f"a URL rewrite applies to {REMOTE} ({', '.join(urls.rewrites)}), so where a push goes cannot be verified; "
                "remove it from the git config",
            )
        )
    if transport(registered) is None:
        found.append(
            Issue(
                code=IssueCode.R05, message=f"the registered remote {command.redact(registered)} uses a transport vaultd does not sync over"
            )
        )
    for spec in _config(repo, "--get-all", f"remote.{REMOTE}.fetch"):
        target = spec.lstrip("+").partition(":")[2]
        if not spec.startswith("^") and target and not target.startswith(f"refs/remotes/{REMOTE}/"):
            found.append(
                Issue(
                    code=IssueCode.R05,
                    message=f"{REMOTE}'s fetch refspec {command.redact(spec)!r} writes outside refs/remotes/{REMOTE}/ (a fetch or a "
                    "push would move those refs); restore it: git config remote.origin.fetch '+refs/heads/*:refs/remotes/origin/*'",
                )
            )
    if _config(repo, "--get-all", f"remote.{REMOTE}.vcs"):
        found.append(
            Issue(code=IssueCode.R05, message=f"{REMOTE} names a remote helper (remote.{REMOTE}.vcs), a program git would run; remove it")
        )
    want = normalize(registered, str(repo.top))
    for kind, listed in (("fetch", urls.fetch), ("push", urls.push)):
        for url in listed:
            if normalize(url, str(repo.top)) != want:
                found.append(
                    Issue(
                        code=IssueCode.R05,
                        message=f"{REMOTE}'s {kind} URL is {command.redact(url)}, not the registered remote {command.redact(registered)}",
                    )
                )
    return found


def check(repo: Repo, registered: str | None, vault_id: str) -> str:
    """Raises POLICY (issues R05) unless origin is exactly the registered remote, unrewritten;
    returns the one transport the sync's git calls may use.

    Raises:
        PolicyRefused: POLICY (R05), origin is not exactly the registered remote, or is rewritten.
    """
    found = problems(repo, registered)
    allowed = transport(registered) if registered is not None else None
    if found or allowed is None:
        raise PolicyRefused(f"vault {vault_id!r} does not sync: {found[0].message}; nothing was fetched or pushed", issues=found)
    return allowed

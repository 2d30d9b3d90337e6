"""The mark of a note vaultd generates (a view, a session's note): a frontmatter of one key,
``vaultd_view``, holding the sha256 of the body that follows. A file is vaultd's own exactly when
it still has that shape and its body still hashes to the value; any edit a person makes (to the
body or the header) makes it theirs. Low in the layers so lint can tell them apart too."""

from __future__ import annotations

import hashlib
import re

from protocol.methods.views import VIEW_KEY

_MARK = re.compile(rf"---\n{VIEW_KEY}: ([0-9a-f]{{64}})\n---\n")


def marked(body: str) -> bytes:
    """The view's bytes: its mark, then ``body``."""
    sha = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f"---\n{VIEW_KEY}: {sha}\n---\n{body}".encode()


def is_ours(data: bytes) -> bool:
    """Whether ``data`` is a view exactly as vaultd wrote it (no one has edited it since)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    found = _MARK.match(text)
    return found is not None and hashlib.sha256(text[found.end() :].encode("utf-8")).hexdigest() == found.group(1)

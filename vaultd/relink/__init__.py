"""Links kept pointing where they did when what they name moves.

Moving, merging or deleting a note, or renaming one of its headings, is one small change to the
person, but every link that named the old place would then point nowhere. This package holds the
one concept those operations share, so the planners in :mod:`vaultd.ops` ask it and never rewrite
a link themselves:

- a :class:`Relocation` says where each link must point after the change and resolves a target
  against the vault before and after it, without copying the index;
- :func:`relink` rewrites every file a relocation concerns, the notes that link in
  (:func:`rewrite_links`, each link in the style it was written in) and then the canvases, bases
  and bookmarks (:func:`rewrite_canvas`, :func:`rewrite_base`, :func:`rewrite_bookmarks`), as
  changes of the same operation;
- :func:`broken_links`, :func:`warnings_for` and :func:`repointed` find the links into a
  note's headings that an edit breaks, and repoint them when it renames one;
- :func:`link_text_for`, :func:`new_link` and :func:`property_link` give the text of a link
  vaultd writes anew (the last two in the vault's link format);
  :func:`dead_links_as_text` makes plain text of the links a note copied into another vault
  would leave dead there.

Everything here is a pure rule over the index and the files' text, except the strict reads of an
operation's context (:class:`Reads`); it plans changes and never writes. The modules behind this
face are private: import from ``vaultd.relink``.
"""

from vaultd.relink._anchors import broken_links, repoint_anchor, repointed, warnings_for
from vaultd.relink._base import rewrite_base
from vaultd.relink._canvas import rewrite_bookmarks, rewrite_canvas
from vaultd.relink._files import Reads, Rewritten, relink
from vaultd.relink._notes import Rewrite, dead_links_as_text, rewrite_links
from vaultd.relink._relocation import Relocation, link_name, link_text_for, new_link, property_link

__all__ = [
    "Reads",
    "Relocation",
    "Rewrite",
    "Rewritten",
    "broken_links",
    "dead_links_as_text",
    "link_name",
    "link_text_for",
    "new_link",
    "property_link",
    "relink",
    "repoint_anchor",
    "repointed",
    "rewrite_base",
    "rewrite_bookmarks",
    "rewrite_canvas",
    "rewrite_links",
    "warnings_for",
]

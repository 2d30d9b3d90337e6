"""YAML's cost bounded before anything is built: nesting, node count and alias expansion.

Every YAML vaultd reads comes from a file anyone may have written (a note's header, a ``.base``),
and YAML lets a few hundred bytes cost hours: aliases of aliases repeat a list 9^9 times (the
"billion laughs"), and a header nested 8,000 levels deep makes a pure-Python scanner quadratic.
:func:`screen` reads the text once as libyaml's event stream (in C, linear, without building a
node) and refuses it at the first event past a bound of :mod:`protocol.parse_limits`; only then
may a loader build the document. Text libyaml cannot read is left to the caller's loader, which
must bound itself (the careful frontmatter path counts its own events and depth).

:func:`load_base` is how a ``.base`` is read for lint: screened, then loaded by libyaml with the
safe constructor, as PyYAML's ``safe_load`` reads it.
"""

from __future__ import annotations

from typing import Any, Final

import yaml  # type: ignore[import-untyped]

from protocol.parse_limits import MAX_YAML_ALIAS_NODES, MAX_YAML_DEPTH, MAX_YAML_NODES

__all__ = ["YamlRefused", "load_base", "screen"]

_CParser: Any = getattr(getattr(yaml, "cyaml", None), "CParser", None)
_SafeLoader: Any = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
#: libyaml's own bound on flow nesting; its error is a depth refusal like ours.
_LIBYAML_TOO_DEEP: Final = "maximum nesting depth"


class YamlRefused(ValueError):
    """The YAML passes a bound; nothing of it was built. The message completes "the file ..."."""

    def __init__(self, kind: str, message: str, line: int | None) -> None:
        super().__init__(message)
        self.kind = kind  #: "depth", "nodes", "alias"
        self.line = line  #: 0-based line of the event that passed the bound, when known


def _line(event: Any) -> int | None:
    mark = getattr(event, "start_mark", None)
    return None if mark is None else int(mark.line)


def screen(text: str, *, aliases: bool) -> bool:
    """Refuse ``text`` (:class:`YamlRefused`) at the first event past a bound; True when libyaml
    read all of it within them, False when libyaml could not read it (or is missing): then the
    caller's own loader judges the text, and must bound its own work.

    Args:
        aliases: whether aliases may appear at all (a note's header refuses them outright); when
            they may, the nodes they repeat are counted, each alias counting all its target holds.
    """
    if _CParser is None:
        return False
    try:
        parser = _CParser(text)
    except UnicodeEncodeError:  # a lone surrogate: libyaml reads UTF-8 only; one "?" keeps the structure
        parser = _CParser(text.encode("utf-8", "replace").decode("utf-8"))
    nodes = 0
    repeated = 0
    open_collections: list[tuple[str | None, int]] = []  # per open collection: its anchor, ``nodes`` at its start
    open_anchors: set[str] = set()
    sizes: dict[str, int] = {}  # per finished anchor: the nodes its target holds, aliases expanded
    try:
        while (event := parser.get_event()) is not None:
            if isinstance(event, yaml.AliasEvent):
                if not aliases:
                    raise YamlRefused("alias", "uses YAML anchors or aliases", _line(event))
                if event.anchor in open_anchors:
                    raise YamlRefused("alias", "has an alias inside the collection it names", _line(event))
                size = sizes.get(event.anchor, 1)
                repeated += size
                nodes += size
                if repeated > MAX_YAML_ALIAS_NODES:
                    message = f"has aliases that repeat more than {MAX_YAML_ALIAS_NODES} values"
                    raise YamlRefused("alias", message, _line(event))
            elif isinstance(event, yaml.ScalarEvent):
                nodes += 1
                if event.anchor is not None:
                    if not aliases:
                        raise YamlRefused("alias", "uses YAML anchors or aliases", _line(event))
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                nodes += 1
                if event.anchor is not None:
                    if not aliases:
                        raise YamlRefused("alias", "uses YAML anchors or aliases", _line(event))
                    open_anchors.add(event.anchor)
                open_collections.append((event.anchor, nodes))
                if len(open_collections) > MAX_YAML_DEPTH:
                    raise YamlRefused("depth", f"nests deeper than {MAX_YAML_DEPTH} levels", _line(event))
            elif isinstance(event, yaml.CollectionEndEvent) and open_collections:
                anchor, start = open_collections.pop()
                if anchor is not None:
                    open_anchors.discard(anchor)
                    sizes[anchor] = nodes - start + 1
            if nodes > MAX_YAML_NODES:
                raise YamlRefused("nodes", f"holds more than {MAX_YAML_NODES} values", _line(event))
    except yaml.YAMLError as exc:
        if _LIBYAML_TOO_DEEP in str(exc):
            mark = getattr(exc, "problem_mark", None)
            raise YamlRefused("depth", f"nests deeper than {MAX_YAML_DEPTH} levels", None if mark is None else mark.line) from None
        return False
    finally:
        parser.dispose()
    return True


def load_base(text: str) -> Any:
    """A ``.base``'s data as ``yaml.safe_load`` gives it, once :func:`screen` passed it.

    Raises:
        YamlRefused: the text passes a bound.
        yaml.YAMLError: the text is not valid YAML.
    """
    if not screen(text, aliases=True) and _CParser is None:
        # Without libyaml nothing was screened: a pure-Python load of hostile text is unbounded.
        raise YamlRefused("depth", "cannot be read safely without libyaml", None)
    return yaml.load(text, Loader=_SafeLoader)  # the safe constructor, in C when available

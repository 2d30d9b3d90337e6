"""Layers point one way: vaultctl -> protocol <- vaultd, and inside vaultd from the daemon down to
the filesystem. Walk every import with ast and fail on a forbidden one, so a convenient shortcut
cannot creep in.

Inside vaultd each module has a rank (``LAYERS``); it may import only from its own rank or below,
and no set of vaultd modules may import one another in a circle. Imports under ``TYPE_CHECKING``
and imports inside functions count: a type-only or a late import still ties the two modules'
designs together, and it is how a cycle usually hides.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "protocol": {"vaultd", "vaultctl"},
    "vaultctl": {"vaultd"},
    "vaultd": {"vaultctl"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_forbidden_imports(package: str) -> None:
    files = sorted((REPO / package).rglob("*.py"))
    assert files, f"no modules found under {package}/"
    bad = [
        f"{f.relative_to(REPO)}:{line} imports {name}"
        for f in files
        for line, name in _imports(f)
        if name.split(".")[0] in FORBIDDEN[package]
    ]
    assert not bad, "\n".join(bad)


def test_cli_start_imports_no_daemon_module() -> None:
    """`vaultctl --help` must stay light: no daemon module, no anyio, no apsw."""
    code = (
        "import sys, runpy; sys.argv=['vaultctl','--help']\n"
        "try:\n    runpy.run_module('vaultctl.main', run_name='__main__')\nexcept SystemExit: pass\n"
        "heavy=[m for m in sys.modules if m.split('.')[0] in ('vaultd','anyio','apsw','watchfiles','ruamel','mcp')]\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert "HEAVY []" in out, out


def test_handlers_see_the_daemon_only_as_a_host() -> None:
    """vaultd.daemon imports the handlers; no handler module imports it back, not even for types."""
    files = sorted((REPO / "vaultd" / "api").rglob("*.py")) + sorted((REPO / "vaultd" / "ops").rglob("*.py"))
    bad = [
        f"{f.relative_to(REPO)}:{line} imports {name}"
        for f in files
        for line, name in _imports(f)
        if name == "vaultd.daemon" or name.startswith("vaultd.daemon.")
    ]
    assert files and not bad, "\n".join(bad)


#: Lowest first. A module belongs to the longest name here that is it or contains it; the package
#: ``vaultd`` itself (its version) is the base. A new package must be given a place.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("protocol",),
    ("vaultd", "vaultd.errors", "vaultd.content_mode", "vaultd.faults"),
    ("vaultd.fsio", "vaultd.memory", "vaultd.waits", "vaultd.worker", "vaultd.vault_work"),
    ("vaultd.vault",),  # notes, links, the index and its cache, the watcher
    ("vaultd.retrieve",),  # the chunk index beside the cache, following the live index; the optional rerank
    ("vaultd.obsidian",),  # Obsidian's settings, property types, Bases, tasks, daily notes, templates over the index
    ("vaultd.sources",),  # the ledgers' and identifiers' pure rules, below the validation that applies them
    ("vaultd.policy",),
    ("vaultd.tidy",),  # the migration rules of vault.tidy: pure functions over a note's text
    ("vaultd.memory_import",),  # an agent's memory files read as entries, below the import that writes them
    ("vaultd.graph",),  # the link graph, its walks, communities and topic map: pure functions over the index
    ("vaultd.lint",),  # vault-wide lint rules over the graph's snapshot
    ("vaultd.registry",),
    ("vaultd.txn",),
    ("vaultd.gate",),  # the agent gate: verdicts and the stored proposals
    ("vaultd.sessions",),  # agent sessions' records and work documents
    ("vaultd.views",),  # generated views' text and mark (written by vaultd.ops.view_refresh)
    ("vaultd.checkout", "vaultd.wikify", "vaultd.editions"),  # checkouts' records and merge, suggested links, journal volumes
    ("vaultd.git",),  # the repository: commits through vaultd's own index, history, remotes, merges
    ("vaultd.specs",),  # spec sources: their files, references, checks and freshness (git)
    ("vaultd.events",),  # a vault's event log and clock, for subscribers
    ("vaultd.runtime",),  # a vault as the daemon holds it: lock, recovery, live index
    ("vaultd.console",),  # the web console's child process: started, asked for tokens, stopped
    ("vaultd.relink",),  # links kept pointing where they did when a file moves or a heading is renamed
    ("vaultd.ops",),  # the write operations, a room's own in its package (vaultd.ops.sources, vaultd.ops.git)
    ("vaultd.api",),
    ("vaultd.server",),
    ("vaultd.daemon",),
    ("vaultd.main",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _modules(package: str) -> dict[str, Path]:
    found = {}
    for path in sorted((REPO / package).rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = {**_modules("protocol"), **_modules("vaultd")}


def _known(name: str, modules: dict[str, Path] = MODULES) -> str | None:
    """``name`` or the nearest package above it that is one of our modules."""
    while name not in modules:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name


def _targets(module: str, path: Path, modules: dict[str, Path] = MODULES) -> Iterator[tuple[int, str]]:
    """Every module of ours that ``module`` imports, anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            names = subs if len(subs) == len(node.names) else [*subs, base]
        else:
            continue
        for name in names:
            target = _known(name, modules)
            if target is not None and target != module:
                yield node.lineno, target


EDGES = {module: sorted(set(_targets(module, path))) for module, path in MODULES.items()}


def _rank(module: str) -> int | None:
    name: str | None = module
    while name is not None:
        if name in RANK and (name != "vaultd" or module == "vaultd"):
            return RANK[name]
        name = name.rsplit(".", 1)[0] if "." in name else None
    return None


@pytest.mark.parametrize("package", ["protocol", "vaultd", "vaultctl", "reliability", "benchmarks"])
def test_every_package_has_an_init(package: str) -> None:
    """A folder of modules without ``__init__.py`` is a namespace package: it imports, but mypy,
    the layer table above and the wheel each see it differently."""
    folders = {p.parent for p in (REPO / package).rglob("*.py") if "__pycache__" not in p.parts}
    bare = sorted(str(f.relative_to(REPO)) for f in folders if not (f / "__init__.py").exists())
    assert not bare, f"add __init__.py to: {bare}"


def test_every_module_has_a_layer() -> None:
    unranked = [m for m in MODULES if _rank(m) is None]
    assert not unranked, f"give these a place in LAYERS: {unranked}"


def test_layers_place_packages_not_modules() -> None:
    """A layer is a package, so a module's layer is where it lives: a module that belongs higher
    than its package moves to a package of that layer (a room's operations to ``vaultd.ops``),
    rather than being placed by hand. Only vaultd's own top-level modules stand alone."""
    by_hand = [
        name
        for names in LAYERS
        for name in names
        if name not in MODULES or (MODULES[name].name != "__init__.py" and MODULES[name].parent != REPO / "vaultd")
    ]
    assert not by_hand, f"LAYERS names modules inside a package (or nothing): {by_hand}; move each to a package of its layer"


#: Packages whose modules are private behind their ``__init__``: the rest of the code imports the face.
FACES = ("vaultd.relink",)
SOURCE_TREES = ("protocol", "vaultd", "vaultctl", "tests", "reliability", "benchmarks", "scripts")


def _private_imports(source: str, face: str) -> list[tuple[int, str]]:
    """The imports in ``source`` of a private module of ``face`` (``face._x``, or ``_x`` from it)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + ([f"{node.module}.{a.name}" for a in node.names] if node.module == face else [])
        else:
            continue
        found += [(node.lineno, n) for n in names if n.startswith(f"{face}._")]
    return found


def test_private_import_finder_finds_them() -> None:
    code = "import vaultd.relink._files\nfrom vaultd.relink._notes import x\nfrom vaultd.relink import _base, relink\nfrom vaultd.relink import Relocation\n"
    assert _private_imports(code, "vaultd.relink") == [
        (1, "vaultd.relink._files"),
        (2, "vaultd.relink._notes"),
        (3, "vaultd.relink._base"),
    ]


@pytest.mark.parametrize("face", FACES)
def test_a_face_is_imported_not_its_rooms(face: str) -> None:
    """Outside the package, its names come from its ``__init__``, so its modules can be split,
    merged or renamed without touching a caller (anyio's ``_core`` behind ``anyio``)."""
    inside = REPO.joinpath(*face.split("."))
    assert inside.is_dir()
    bad = [
        f"{path.relative_to(REPO)}:{line} imports {name}"
        for tree in SOURCE_TREES
        for path in sorted((REPO / tree).rglob("*.py"))
        if "__pycache__" not in path.parts and inside not in path.parents
        for line, name in _private_imports(path.read_text(encoding="utf-8"), face)
    ]
    assert not bad, f"import these from {face}: " + "\n".join(bad)


def test_imports_point_down_the_layers() -> None:
    bad = [
        f"{MODULES[module].relative_to(REPO)}:{line} imports {target} "
        f"({LAYERS[_rank(target) or 0][0]} is above {LAYERS[_rank(module) or 0][0]})"
        for module, edges in EDGES.items()
        for line, target in edges
        if (_rank(target) or 0) > (_rank(module) or 0)
    ]
    assert not bad, "\n".join(bad)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_vaultd() -> None:
    graph = {m: {t for _, t in EDGES[m]} for m in MODULES}
    assert _cycles(graph) == []


MODULE_LINES = 600  #: past this, a module is read as two concepts unless named below with its one
ONE_CONCEPT: dict[str, str] = {}
SMALL_LINES = 60  #: under this, a module only one other module imports belongs in it, unless named below
STANDS_ALONE = {
    "vaultctl/assignments.py": "the --set grammar (key=value, key:=JSON, an object): a pure parser with unit tests of its own, apart from the typer commands",
    "vaultctl/console/calls.py": "the console's whole reach (the daemon methods a page may call), kept apart so the list is reviewed on its own",
    "vaultd/api/console_methods.py": "one room's handlers, registered by the api package beside every other room's",
    "vaultd/api/index_methods.py": "one room's handlers, registered by the api package beside every other room's",
    "vaultd/api/name_methods.py": "one room's handlers, registered by the api package beside every other room's",
    "vaultd/api/memory_methods.py": "one room's handlers, registered by the api package beside every other room's",
    "vaultd/api/operation_methods.py": "the write operations' handlers, made from the catalogue and registered by the api package beside the rooms'",
    "vaultd/lint/topic_map.py": "one family of lint rules (L16, L17) beside files, links, names and notes; the engine runs each family",
    "vaultd/policy/added.py": "one screening rule (which lines a write adds) behind the policy package's face",
    "vaultd/policy/decoded.py": "one screening rule (decoded frontmatter as lines) behind the policy package's face",
    "vaultd/policy/owned.py": "one write rule (P05, vaultd's own files) behind the policy package's face",
    "vaultd/policy/projects.py": "one log rule (V18, the project registry) behind the policy package's face",
    "vaultd/policy/names.py": "the note-name rule of the policy layer; its one caller, create, is an operation above that layer",
    "vaultd/ops/sources/attachments.py": "Obsidian's attachment-folder setting read as a rule of its own, which capture applies",
    "vaultd/ops/sources/rawfiles.py": "raw copies hashed through the vault's descriptors (the engine's file layer), for the source handlers to tell drift",
    "vaultd/git/raw_copies.py": "which files are capture's raw copies, a rule of its own that checkpoints and snapshots both apply through the keeper",
}


def _lines() -> dict[str, int]:
    return {
        str(path.relative_to(REPO)): len(path.read_text(encoding="utf-8").splitlines())
        for package in ("protocol", "vaultd", "vaultctl")
        for path in (REPO / package).rglob("*.py")
        if "__pycache__" not in path.parts
    }


def test_a_long_module_holds_one_named_concept() -> None:
    """A module grows past the budget only on purpose: split it where it holds two things, or
    name the one thing it holds here. A module back under the budget leaves the list."""
    over = {path: n for path, n in _lines().items() if n > MODULE_LINES}
    unnamed = sorted(f"{path} ({over[path]} lines)" for path in set(over) - set(ONE_CONCEPT))
    assert not unnamed, f"over {MODULE_LINES} lines: split these, or name their one concept in ONE_CONCEPT: {unnamed}"
    shrunk = sorted(set(ONE_CONCEPT) - set(over))
    assert not shrunk, f"no longer over {MODULE_LINES} lines: remove from ONE_CONCEPT: {shrunk}"


def _lone_small_modules() -> dict[str, str]:
    """Each module under SMALL_LINES that exactly one other module imports (a package's face and a
    ``__main__`` aside), with that importer."""
    modules = {**MODULES, **_modules("vaultctl")}
    importers: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for _, target in _targets(name, path, modules):
            importers[target].add(name)
    lines = _lines()
    return {
        str(path.relative_to(REPO)): next(iter(importers[name]))
        for name, path in modules.items()
        if path.name not in ("__init__.py", "__main__.py")
        and lines[str(path.relative_to(REPO))] < SMALL_LINES
        and len(importers[name]) == 1
    }


def test_a_small_module_with_one_importer_says_why_it_stands_alone() -> None:
    """A short module that only its caller uses belongs in that caller: merge it there, or say here
    why it stands alone. A module that grew, gained a second importer or left leaves the list."""
    lone = _lone_small_modules()
    unnamed = sorted(f"{path} (imported only by {lone[path]})" for path in set(lone) - set(STANDS_ALONE))
    assert not unnamed, f"under {SMALL_LINES} lines with one importer: merge into it, or say why in STANDS_ALONE: {unnamed}"
    stale = sorted(set(STANDS_ALONE) - set(lone))
    assert not stale, f"no longer small with one importer: remove from STANDS_ALONE: {stale}"


def test_the_small_module_finder_sees_a_lone_module() -> None:
    """The finder is not vacuous: a module named in STANDS_ALONE is found with its one importer."""
    assert _lone_small_modules()["vaultd/policy/owned.py"] == "vaultd.policy"


def _architecture_layers() -> list[tuple[str, ...]]:
    """The layer table of ARCHITECTURE.md, top row first: each row's packages, as written."""
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## The daemon's layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [tuple(name for name in rows_cell.split("|")[1].replace("`", "").replace(" ", "").split(",")) for rows_cell in rows]


def test_architecture_page_lists_the_layers_in_order() -> None:
    """ARCHITECTURE.md draws the layers from the top down; they are LAYERS, read upwards, so the
    page a newcomer reads first cannot drift from the rule the imports are held to."""
    assert _architecture_layers() == list(reversed(LAYERS))


def test_architecture_page_names_only_paths_that_exist() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = {
        m.rstrip("/")
        for m in re.findall(
            r"`((?:vaultd|vaultctl|protocol|tests|reliability|benchmarks|docs|packaging|systemd|launchd)/[\w/.<>-]*)`", text
        )
    }
    missing = sorted(p for p in named if "<" not in p and not (REPO / p).exists())
    assert named, "the page names no path"
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"

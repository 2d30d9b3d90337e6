"""The built artifacts, each installed the way a user would and smoke-tested from outside the
checkout: the wheel in a fresh venv with and without its extras, ``uv tool install`` and ``pipx
install`` of it with the console and graph extras (as packaging/README.md gives them), and the
single-file zipapp (no extras) run by a Python with no venv. Each: ``vaultctl --version``,
``vaultctl status`` starting the daemon, a vault added and searched; then the console and the
communities, which work with their extras and without them name the extra to install. The build
itself must print no warning and give the same wheel (and sdist) twice.

``make test-packaging`` runs these (they install from the package index and take a minute or
two); it installs the build tools of the ``packaging`` group first.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from protocol.version import VERSION
from tests.support.harness import REPO, copy_sample_vault

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(600)]

BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)  #: this Python outside any venv


def _tool(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed: make test-packaging installs the packaging group"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _epoch() -> str:
    out = subprocess.run(["git", "log", "-1", "--format=%ct"], capture_output=True, text=True, cwd=REPO)
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "315532800"


def _build(source: Path, out: Path) -> str:
    """``python -m build`` (sdist, then the wheel from the sdist); returns what it printed."""
    _tool("build")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)],
        env={**os.environ, "SOURCE_DATE_EPOCH": _epoch()},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@dataclass(frozen=True)
class Dist:
    folder: Path
    log: str

    @property
    def wheel(self) -> Path:
        return self.folder / f"vaultd-{VERSION}-py3-none-any.whl"

    @property
    def sdist(self) -> Path:
        return self.folder / f"vaultd-{VERSION}.tar.gz"


@pytest.fixture(scope="module")
def dist() -> Iterator[Dist]:
    folder = Path(tempfile.mkdtemp(prefix="vdist"))
    try:
        yield Dist(folder, _build(REPO, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def place() -> Iterator[Path]:
    """A short folder outside the checkout for one install, its home, socket and vault."""
    root = Path(tempfile.mkdtemp(prefix="vpk"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


#: What reaches the package index from this machine (its CA bundle, pip's settings): a user here has them too.
NETWORK_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


def user_env(root: Path, **extra: str) -> dict[str, str]:
    """A user's environment: no PYTHONPATH, no venv, nothing of the checkout."""
    network = {k: v for k, v in os.environ.items() if k.upper().startswith(NETWORK_SETTINGS)}
    return {
        **network,
        "PATH": os.pathsep.join([str(Path(BASE_PYTHON).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(root / "user"),
        "VAULTD_HOME": str(root / "home"),
        "VAULTD_SOCKET": str(root / "run" / "v.sock"),
        "LANG": "C.UTF-8",
        **extra,
    }


#: The extras the user commands of packaging/README.md and README.md install.
EXTRAS = "[console,graph]"


def smoke(vaultctl: Sequence[str], root: Path, env: dict[str, str], *, extras: bool) -> None:
    """What a new user does first: version, status (the daemon starts), add a vault, search it;
    then the console and the communities, which need the extras (``extras``: installed)."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*vaultctl, *args], env=env, capture_output=True, text=True, timeout=120, cwd=root)

    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"vaultctl {VERSION}", version.stderr
    status = run("status", "--json")
    try:
        assert status.returncode == 0, status.stderr
        pid = json.loads(status.stdout)["pid"]
        assert pid > 0
        vault = copy_sample_vault(root / "notes")
        added = run("vault", "add", "notes", str(vault))
        assert added.returncode == 0, added.stderr
        hits = run("search", "alpha", "--json")
        assert hits.returncode == 0 and json.loads(hits.stdout)["hits"], hits.stderr
        console = run("console", "--no-open", "--json")
        found = run("communities", "--json")
        rows = {f["check"]: f["finding"] for f in json.loads(run("doctor", "--json").stdout)["findings"]}
        if extras:
            assert console.returncode == 0 and json.loads(console.stdout)["url"].startswith("http://127.0.0.1:"), console.stderr
            assert found.returncode == 0 and json.loads(found.stdout)["notes"] > 0, found.stderr
            assert rows["extra:console"].startswith("installed") and rows["extra:graph"].startswith("installed"), rows
        else:
            # One line naming the extra (exit 69, no traceback); the daemon answers on.
            for refused, extra in ((console, "console"), (found, "graph")):
                assert refused.returncode == 69 and not refused.stdout, refused
                assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr, refused.stderr
                assert refused.stderr.rstrip().endswith(f"pip install 'vaultd[{extra}]'"), refused.stderr
                assert rows[f"extra:{extra}"].startswith("not installed"), rows
            again = run("search", "alpha", "--json")
            assert again.returncode == 0 and json.loads(again.stdout)["hits"], again.stderr
    finally:
        stopped = run("daemon", "stop")
    assert stopped.returncode == 0, stopped.stderr


def test_the_build_prints_no_warning(dist: Dist) -> None:
    # This machine's pip configuration names find-links folders that may not exist; pip says so
    # while the build installs its backend. That line is about the machine, not the build.
    lines = [line for line in dist.log.splitlines() if not line.startswith("WARNING: Location '")]
    noisy = [line for line in lines if "warn" in line.lower() or "deprecat" in line.lower()]
    assert not noisy, "\n".join(noisy)
    assert dist.wheel.exists() and dist.sdist.exists()


def test_the_wheel_installs_only_our_packages(dist: Dist) -> None:
    """Exactly the packages pyproject.toml names (no tests, no scripts), each with its __init__."""
    packages = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = wheel.namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == set(packages)
    assert all(f"{p}/__init__.py" in names for p in packages)
    assert f"vaultd-{VERSION}.dist-info/licenses/LICENSE" in names


def test_two_builds_of_the_same_tree_are_identical(dist: Dist, place: Path) -> None:
    """A second build from a fresh copy of the tree (new times, another folder) gives the same bytes."""
    files = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], capture_output=True, text=True, cwd=REPO, check=True)
    copy = place / "src"
    for rel in files.stdout.split("\0"):
        if rel and (REPO / rel).is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / rel, copy / rel)  # contents and the executable bit git keeps; fresh times
    again = place / "again"
    _build(copy, again)
    for first in (dist.wheel, dist.sdist):
        second = again / first.name
        assert hashlib.sha256(first.read_bytes()).hexdigest() == hashlib.sha256(second.read_bytes()).hexdigest(), first.name


def _venv_with(place: Path, requirement: str) -> Path:
    venv = place / "venv"
    subprocess.run([BASE_PYTHON, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", requirement], capture_output=True, text=True, timeout=600
    )
    assert pip.returncode == 0, pip.stderr
    return venv


def test_the_wheel_in_a_fresh_venv(dist: Dist, place: Path) -> None:
    venv = _venv_with(place, f"{dist.wheel}{EXTRAS}")
    smoke([str(venv / "bin" / "vaultctl")], place, user_env(place), extras=True)


def test_the_wheel_without_extras(dist: Dist, place: Path) -> None:
    """``pip install vaultd``: no web stack, no igraph; search works and the rest names its extra."""
    venv = _venv_with(place, str(dist.wheel))
    probe = "import importlib.util as u; print(*(u.find_spec(m) is None for m in ('starlette', 'uvicorn', 'igraph', 'leidenalg')))"
    absent = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=60, cwd=place, check=True)
    assert absent.stdout.split() == ["True"] * 4, absent.stdout  # really installed without them
    smoke([str(venv / "bin" / "vaultctl")], place, user_env(place), extras=False)


def test_uv_tool_install(dist: Dist, place: Path) -> None:
    _tool("uv")
    # Imported by name: the packaging group installs uv, and `make check` type-checks without it.
    find_uv_bin = importlib.import_module("uv").find_uv_bin

    env = user_env(place, UV_TOOL_DIR=str(place / "tools"), UV_TOOL_BIN_DIR=str(place / "bin"), UV_CACHE_DIR=str(place / "cache"))
    done = subprocess.run(
        [find_uv_bin(), "tool", "install", "--python", BASE_PYTHON, f"{dist.wheel}{EXTRAS}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    smoke([str(place / "bin" / "vaultctl")], place, env, extras=True)


def test_pipx_install(dist: Dist, place: Path) -> None:
    _tool("pipx")
    env = user_env(place, PIPX_HOME=str(place / "pipx"), PIPX_BIN_DIR=str(place / "bin"), PIPX_MAN_DIR=str(place / "man"))
    done = subprocess.run(
        [sys.executable, "-m", "pipx", "install", "--python", BASE_PYTHON, f"{dist.wheel}{EXTRAS}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    smoke([str(place / "bin" / "vaultctl")], place, env, extras=True)


def test_the_zipapp_without_a_venv(dist: Dist, place: Path) -> None:
    _tool("shiv")
    pyz = place / "vaultctl.pyz"
    built = subprocess.run(
        [sys.executable, "-m", "shiv", "--reproducible", "--compressed", "-c", "vaultctl", "-o", str(pyz), str(dist.wheel)],
        env={**os.environ, "SOURCE_DATE_EPOCH": _epoch()},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    # The daemon it starts is the same file again (SHIV_ENTRY_POINT), run by the same Python.
    # Built from the wheel alone, as `make zipapp` does: the single file carries neither extra.
    smoke([BASE_PYTHON, str(pyz)], place, user_env(place, SHIV_ROOT=str(place / "shiv")), extras=False)

"""The generator look-up that corpus tests use: a missing generator skips on a developer's machine
and fails under CI, so a green CI run cannot hide corpus tests that never ran."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support import corpus

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(corpus, "PLACES", (tmp_path / "absent.py",))
    monkeypatch.delenv(corpus.ENV, raising=False)
    return tmp_path


def test_a_missing_generator_skips_outside_ci(nowhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=corpus.ENV):
        corpus.generator()


def test_a_missing_generator_fails_under_ci(nowhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=corpus.ENV):
        corpus.generator()


def test_the_environment_names_the_generator(nowhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = nowhere / "gen.py"
    gen.write_text("")
    monkeypatch.setenv(corpus.ENV, str(gen))
    assert corpus.generator() == gen


def test_a_wrong_environment_value_fails_even_outside_ci(nowhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(corpus.ENV, str(nowhere / "missing.py"))
    with pytest.raises(pytest.fail.Exception, match="not a file"):
        corpus.generator()

"""The task-line parser and the status edit, on the Tasks plugin's and Dataview's documented
examples, and as properties over any line."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultd.obsidian.tasks import DateRange, StatusClass, TaskFilter, TaskTable, resolve_day, select, status_class, toggled, with_status
from vaultd.vault.markdown import scan
from vaultd.vault.model import Task
from vaultd.vault.task_line import parse_task

DAY = dt.date(2026, 12, 6)


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        # the Tasks plugin's documentation
        ("- [ ] take out the trash 🔁 every Sunday 📅 2021-04-25", {"recurrence": "every Sunday", "due": "2021-04-25"}),
        ("- [ ] #task Do laundry 📅 2021-04-09", {"due": "2021-04-09", "tags": ("task",)}),
        ("- [x] take out the trash ✅ 2021-04-09", {"status": "x", "done": "2021-04-09"}),
        (
            "- [ ] #task Do stuff 🛫 2021-04-05 ⏳ 2021-04-09 📅 2021-04-10",
            {"start": "2021-04-05", "scheduled": "2021-04-09", "due": "2021-04-10"},
        ),
        (
            "- [ ] Take out the trash 🔁 every week on Sunday ⏳ 2021-04-25",
            {"recurrence": "every week on Sunday", "scheduled": "2021-04-25"},
        ),
        ("- [ ] take out the trash ⏫", {"priority": "high"}),
        ("- [ ] urgent 🔺", {"priority": "highest"}),
        ("- [ ] sometime 🔼", {"priority": "medium"}),
        ("- [ ] later 🔽", {"priority": "low"}),
        ("- [ ] never ⏬", {"priority": "lowest"}),
        ("- [-] cancelled task ❌ 2023-06-15", {"status": "-", "cancelled": "2023-06-15"}),
        ("- [ ] do something ➕ 2023-04-13", {"created": "2023-04-13"}),
        ("- [ ] with selector 📅\ufe0f 2023-04-13", {"due": "2023-04-13"}),
        # Dataview's documentation
        ("- [ ] Send an email to Alexander [due:: 2022-05-15]", {"due": "2022-05-15"}),
        ("- [ ] Feed the cat (due:: 2021-08-22)", {"due": "2021-08-22"}),
        ("- [x] completed task [completion:: 2021-08-22]", {"status": "x", "done": "2021-08-22"}),
        ("- [ ] Due this Saturday 🗓️2021-08-29", {"due": "2021-08-29"}),
        ("- [ ] rated [priority:: High] [repeat:: every week]", {"priority": "high", "recurrence": "every week"}),
        ("- [ ] not a date [due:: soon]", {"due": None}),
        ("- [ ] first wins 📅 2021-01-01 [due:: 2022-02-02]", {"due": "2021-01-01"}),
    ],
)
def test_documented_formats(line: str, fields: dict[str, object]) -> None:
    task = parse_task(line)
    assert task is not None
    for name, value in fields.items():
        assert getattr(task, name) == value, name


@pytest.mark.parametrize(
    ("line", "status", "text"),
    [
        ("- [ ] a", " ", "a"),
        ("* [X] b", "X", "b"),
        ("+ [/] c", "/", "c"),
        ("1. [>] d", ">", "d"),
        ("12) [?] e", "?", "e"),
        ("  - [ ] nested", " ", "nested"),
        ("> - [ ] quoted", " ", "quoted"),
        ("> > * [x] twice quoted", "x", "twice quoted"),
        ("- [ ]", " ", ""),
        ("- [ ] trailing  \r", " ", "trailing"),
    ],
)
def test_task_shapes(line: str, status: str, text: str) -> None:
    task = parse_task(line)
    assert task is not None and (task.status, task.text) == (status, text)


@pytest.mark.parametrize(
    "line", ["- [] empty", "-[ ] no space", "[ ] no bullet", "- [ab] two", "- [ ]x glued", "text - [ ] later", "- [\t"]
)
def test_not_tasks(line: str) -> None:
    assert parse_task(line) is None


def test_the_scanner_skips_code_and_knows_the_heading() -> None:
    text = "---\na: 1\n---\n# H\n- [ ] one\n```\n- [ ] code\n```\n`- [ ] span`\n## K\n~~~\n- [x] tilde\n~~~\n> - [x] two\n"
    tasks = scan(text, text.index("# H"), 4).tasks
    assert [(t.line, t.status, t.text, t.heading) for t in tasks] == [(5, " ", "one", "H"), (14, "x", "two", "K")]


def test_with_status_stamps_and_removes_the_done_date() -> None:
    assert with_status("- [ ] pay 📅 2026-12-01", "x", DAY) == "- [x] pay 📅 2026-12-01 ✅ 2026-12-06"
    assert with_status("- [ ] pay 📅 2026-12-01 ^id-1", "x", DAY) == "- [x] pay 📅 2026-12-01 ✅ 2026-12-06 ^id-1"
    assert with_status("- [x] pay 📅 2026-12-01 ✅ 2026-12-02 ^id", " ", DAY) == "- [ ] pay 📅 2026-12-01 ^id"
    assert with_status("- [x] pay ✅ 2026-12-02", "X", DAY) == "- [X] pay ✅ 2026-12-02"  # done stays done, its date kept
    assert with_status("- [ ] plain", "x", DAY) == "- [x] plain"
    assert with_status("- [x] plain", "-", DAY) == "- [-] plain"
    with pytest.raises(ValueError, match="not a task"):
        with_status("just text", "x", DAY)


def test_status_classes_toggle_and_days() -> None:
    assert [status_class(c) for c in " x X - / ?".split(" ")] == [StatusClass.OPEN] + [StatusClass.DONE] * 2 + [
        StatusClass.CANCELLED,
        StatusClass.OPEN,
        StatusClass.OPEN,
    ]
    assert (toggled(" "), toggled("/"), toggled("x"), toggled("-")) == ("x", "x", " ", " ")
    assert resolve_day("today", DAY) == DAY
    assert resolve_day("Tomorrow", DAY) == dt.date(2026, 12, 7)
    assert resolve_day("+2w", DAY) == dt.date(2026, 12, 20)
    assert resolve_day("-1d", DAY) == dt.date(2026, 12, 5)
    assert resolve_day("2026-01-31", DAY) == dt.date(2026, 1, 31)
    for bad in ("next week", "2026-02-30", "+99999d", ""):
        with pytest.raises(ValueError):
            resolve_day(bad, DAY)
    week = DateRange(after="2026-12-05", before="2026-12-13")
    assert [week.holds(d) for d in ("2026-12-05", "2026-12-06", "2026-12-12", "2026-12-13", None)] == [False, True, True, False, False]
    assert DateRange().holds(None)


# -- properties ---------------------------------------------------------------------------------

_STATUS = st.characters(blacklist_characters="]\r\n", blacklist_categories=["Cs"])
_TEXT = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), max_size=60).map(str.strip)
_PREFIX = st.sampled_from(["- ", "* ", "+ ", "1. ", "2) ", "  - ", "\t* ", "> - ", "> > 3. "])


@given(st.text(max_size=200))
def test_any_line_parses_or_is_none(line: str) -> None:
    task = parse_task(line)
    if task is not None:
        assert len(task.status) == 1 and task.status != "]"


@given(_PREFIX, _STATUS, _TEXT)
def test_a_built_line_reads_back(prefix: str, status: str, text: str) -> None:
    line = f"{prefix}[{status}]" + (f" {text}" if text else "")
    task = parse_task(line)
    assert task is not None
    assert (task.prefix, task.status, task.text) == (prefix, status, text)


@given(_PREFIX, _STATUS, _TEXT, _STATUS)
def test_a_status_edit_changes_the_status_alone_on_plain_lines(prefix: str, status: str, text: str, new: str) -> None:
    line = f"{prefix}[{status}] {text}"
    task = parse_task(line)
    assert task is not None
    after = with_status(line, new, DAY)
    if not task.emoji:
        assert after == f"{prefix}[{new}] {text}"
    again = parse_task(after)
    assert again is not None and again.status == new


@given(_PREFIX, _TEXT.filter(lambda t: "✅" not in t))
def test_done_then_open_gives_the_line_back(prefix: str, text: str) -> None:
    line = f"{prefix}[ ] {text} 📅 2026-01-01"
    done = with_status(line, "x", DAY)
    assert done.endswith("✅ 2026-12-06") or "✅ 2026-12-06 ^" in done
    assert with_status(done, " ", DAY) == line


_DAYS = st.sampled_from([None, "2026-12-01", "2026-12-05", "2026-12-06", "2026-12-10"])
_RANGES = st.builds(DateRange, before=_DAYS, after=_DAYS, on=_DAYS)


@settings(max_examples=1000)
@given(
    st.builds(
        TaskFilter,
        status=st.sampled_from(["open", "done", "cancelled", "any", "x", " ", "/", "-"]),
        tag=st.sampled_from([None, "work", "a/b"]),
        due=_RANGES,
        scheduled=_RANGES,
    ),
    st.lists(
        st.builds(
            Task,
            line=st.integers(1, 9),
            status=st.sampled_from([" ", "x", "X", "-", "/", "?"]),
            text=st.just("t"),
            heading=st.none(),
            due=_DAYS,
            scheduled=_DAYS,
            tags=st.sampled_from([(), ("work",), ("Work/deep",), ("a/b",), ("a/bc",)]),
        ),
        max_size=8,
    ),
)
def test_the_compiled_filter_agrees_with_the_plain_one(wanted: TaskFilter, tasks: list[Task]) -> None:
    fast = wanted.predicate()
    assert [fast(t) for t in tasks] == [wanted.wants(t) for t in tasks]


@settings(max_examples=300)
@given(
    st.dictionaries(
        st.sampled_from(["a.md", "b/c.md", "b/d.md", "e.md"]),
        st.lists(st.tuples(st.sampled_from([" ", "x", "-", "/"]), _DAYS), min_size=1, max_size=5),
    ),
    st.sampled_from(["open", "any", "done", "/"]),
    _RANGES,
    st.integers(1, 4),
)
def test_pages_hold_every_match_once_and_the_total_agrees(
    notes: dict[str, list[tuple[str, str | None]]], status: str, due: DateRange, limit: int
) -> None:
    table = TaskTable()
    for path, items in notes.items():
        table._put(path, [Task(line=n + 1, status=s, text="t", heading=None, due=d) for n, (s, d) in enumerate(items)])
    wanted = TaskFilter(status=status, due=due)
    expected = [(p, t.line) for p in sorted(notes) if p != "e.md" for t in table.tasks[p] if wanted.wants(t)]  # e.md: private
    seen: list[tuple[str, int]] = []
    after = None
    while True:
        page, total, more = select(table, wanted, lambda p: p != "e.md", after, limit)
        assert total == len(expected)
        seen += [(p, t.line) for p, t in page]
        if not more:
            break
        after = seen[-1]
    assert seen == expected


_LINES = st.sampled_from(
    ["- [ ] a", "* [x] b #t", "text", "", "```", "> - [/] q", "1. [ ] n 📅 2026-01-01", "# Head", "- [] no", "  - [-] c"]
)


@given(st.lists(_LINES, max_size=30))
def test_the_scanner_finds_each_task_line_outside_fences(lines: list[str]) -> None:
    expected, fenced = [], False
    for n, line in enumerate(lines, start=1):
        if line == "```":
            fenced = not fenced
        elif not fenced and (task := parse_task(line)) is not None:
            expected.append((n, task.status, task.text))
    found = scan("\n".join(lines)).tasks
    assert [(t.line, t.status, t.text) for t in found] == expected

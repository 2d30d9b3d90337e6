"""The report: a Markdown table of every figure, the goals with PASS/MISS, and the JSON beside it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.stats import Figure

VAULTD, BM, LIMIT = "vaultd", "basic-memory", "limit"
Results = dict[int, dict[str, dict[str, Figure]]]  #: notes -> system -> key -> figure


@dataclass(frozen=True)
class Row:
    label: str
    stat: str  #: "p50" or "p95"
    vaultd: str | None = None
    bm: str | None = None
    limit: str | None = None


ROWS = (
    Row("cold index build (vault.add until ready; limit: bare FTS5 build)", "p50", "cold_build", "cold_build", "cold_build"),
    Row("cold index build, CPU seconds", "p50", "cold_build_cpu", "cold_build_cpu", "cold_build_cpu"),
    Row("cold index build, daemon's own 'index ready' log", "p50", "cold_build_log"),
    Row("read every note (limit: Python read loop)", "p50", limit="read_loop"),
    Row("daemon start to first session (empty home)", "p50", "daemon_start"),
    Row("warm restart to first note.list answer", "p50", "warm_restart"),
    Row("warm restart, daemon's own 'index ready' log", "p50", "warm_restart_log"),
    Row("search p50 (vaultd socket; basic-memory MCP; limit FTS5 in-process)", "p50", "search", "mcp_search", "search"),
    Row("search p95 (same)", "p95", "search", "mcp_search", "search"),
    Row("search p50 (limit: ripgrep literal AND)", "p50", "search", limit="ripgrep"),
    Row("search via MCP tools/call p50", "p50", "mcp_search", "mcp_search"),
    Row("search via MCP tools/call p95", "p95", "mcp_search", "mcp_search"),
    Row("note.read by path p50", "p50", "read"),
    Row("`vaultctl search` whole command, median of runs", "p50", "cli_search"),
    Row("note.create p50 (basic-memory: MCP write_note)", "p50", "create", "create"),
    Row("note.create p95 (same)", "p95", "create", "create"),
    Row("note.patch p50", "p50", "patch"),
    Row("note.patch p95", "p95", "patch"),
    Row("sequential writes per second", "p50", "writes_per_s"),
    Row("freshness p50 (external write until search finds it)", "p50", "freshness"),
    Row("freshness p95", "p95", "freshness"),
    Row("freshness with fresh: true, p50", "p50", "freshness_barrier"),
    Row("freshness with fresh: true, p95", "p95", "freshness_barrier"),
    Row("RSS after indexing (basic-memory: its MCP server)", "p50", "rss_indexed", "rss_indexed"),
    Row("RSS of the MCP server process (vaultd: the `vaultctl mcp` shim alone)", "p50", "rss_mcp", "rss_mcp"),
    Row("RSS after a warm restart", "p50", "rss_restarted"),
    Row("idle CPU (% of one core)", "p50", "idle_cpu"),
    Row("index cache on disk (limit: bare FTS5 file)", "p50", "index_cache", limit="index_cache"),
)


def fmt(fig: Figure | None, stat: str) -> str:
    if fig is None:
        return ""
    if not fig.ok:
        return f"_{fig.note}_" if fig.note else "—"
    value = getattr(fig, stat)
    mark = " (extrapolated)" if fig.extrapolated else ""
    if fig.unit == "s":
        text = f"{value * 1e3:.2f} ms" if value < 0.1 else f"{value * 1e3:.0f} ms" if value < 1 else f"{value:.2f} s"
    elif fig.unit == "B":
        text = f"{value / 1e6:.1f} MB"
    elif fig.unit == "%":
        text = f"{value:.3f} %"
    else:
        text = f"{value:.0f}{fig.unit}"
    return text + mark


def ratio(a: Figure | None, b: Figure | None, stat: str) -> str:
    if a is None or b is None or not a.ok or not b.ok or getattr(b, stat) == 0:
        return ""
    return f"{getattr(a, stat) / getattr(b, stat):.3g}x"


def table(results: Results) -> str:
    lines = ["| metric | vaultd | basic-memory | limit | vaultd/basic-memory | vaultd/limit |", "|---|---|---|---|---|---|"]
    for notes, systems in sorted(results.items()):
        for row in ROWS:
            v = systems.get(VAULTD, {}).get(row.vaultd) if row.vaultd else None
            b = systems.get(BM, {}).get(row.bm) if row.bm else None
            lim = systems.get(LIMIT, {}).get(row.limit) if row.limit else None
            if v is None and b is None and lim is None:
                continue
            lines.append(
                f"| {notes:,} notes: {row.label} | {fmt(v, row.stat)} | {fmt(b, row.stat)} | "
                f"{fmt(lim, row.stat)} | {ratio(v, b, row.stat)} | {ratio(v, lim, row.stat)} |"
            )
    return "\n".join(lines)


def _get(results: Results, notes: int, system: str, key: str) -> Figure | None:
    fig = results.get(notes, {}).get(system, {}).get(key)
    return fig if fig is not None and fig.ok else None


def goals(results: Results) -> list[dict[str, Any]]:
    """Each goal at each size where its inputs were measured; a goal with no input is reported as such."""
    out: list[dict[str, Any]] = []

    def add(goal: str, notes: int | None, measured: str, target: str, ok: bool | None, note: str = "") -> None:
        verdict = "n/a" if ok is None else "PASS" if ok else "MISS"
        out.append({"goal": goal, "notes": notes, "measured": measured, "target": target, "verdict": verdict, "note": note})

    ms = 1e3
    for n in sorted(results):
        vs, ls = _get(results, n, VAULTD, "search"), _get(results, n, LIMIT, "search")
        bs = _get(results, n, BM, "mcp_search")
        if vs and ls:
            add(
                "note.search p50 <= 2x bare FTS5 query + 1 ms",
                n,
                f"{vs.p50 * ms:.2f} ms",
                f"<= {(2 * ls.p50 + 1e-3) * ms:.2f} ms",
                vs.p50 <= 2 * ls.p50 + 1e-3,
            )
        if vs and bs:
            add(
                "note.search p50 >= 20x faster than basic-memory's MCP search",
                n,
                f"{bs.p50 / vs.p50:.1f}x",
                ">= 20x",
                bs.p50 / vs.p50 >= 20,
            )
        vc, lc, bc = (_get(results, n, s, "cold_build") for s in (VAULTD, LIMIT, BM))
        if vc and bc:
            add(
                "cold index build >= 5x faster than basic-memory's",
                n,
                f"{bc.p50 / vc.p50:.1f}x",
                ">= 5x",
                bc.p50 / vc.p50 >= 5,
                "basic-memory's time is extrapolated" if bc.extrapolated else "",
            )
        if vc and lc:
            add("cold index build <= 3x the bare FTS5 build", n, f"{vc.p50 / lc.p50:.2f}x", "<= 3x", vc.p50 / lc.p50 <= 3)
        if n >= 10000 and (w := _get(results, n, VAULTD, "warm_restart")):
            add("warm restart < 1.5 s", n, f"{w.p50:.2f} s", "< 1.5 s", w.p50 < 1.5)
        if f := _get(results, n, VAULTD, "freshness"):
            add("freshness p95 < 300 ms", n, f"{f.p95 * ms:.0f} ms", "< 300 ms", f.p95 < 0.3)
        vw, bw = _get(results, n, VAULTD, "create"), _get(results, n, BM, "create")
        if vw:
            add("note.create p50 < 15 ms", n, f"{vw.p50 * ms:.2f} ms", "< 15 ms", vw.p50 < 0.015)
            if bw:
                add(
                    "note.create >= 10x faster than basic-memory's write_note",
                    n,
                    f"{bw.p50 / vw.p50:.1f}x",
                    ">= 10x",
                    bw.p50 / vw.p50 >= 10,
                )
        elif n == min(results):
            why = results[n].get(VAULTD, {}).get("create")
            add("note.create p50 < 15 ms and >= 10x basic-memory's write_note", n, why.note if why else "—", "< 15 ms, >= 10x", None)
        if i := _get(results, n, VAULTD, "idle_cpu"):
            add("idle CPU < 1%", n, f"{i.p50:.3f} %", "< 1 %", i.p50 < 1.0)
    big = [n for n in results if n >= 10000 and _get(results, n, VAULTD, "rss_indexed")]
    bm_sizes = [n for n in results if _get(results, n, BM, "rss_indexed")]
    if big and bm_sizes:
        n = min(big)
        same = n in bm_sizes
        m = n if same else max(bm_sizes)
        v, b = _get(results, n, VAULTD, "rss_indexed"), _get(results, m, BM, "rss_indexed")
        assert v and b
        add(
            "daemon RSS at 10,000 notes <= basic-memory MCP server's RSS on the same vault",
            n,
            f"{v.p50 / 1e6:.0f} MB",
            f"<= {b.p50 / 1e6:.0f} MB",
            v.p50 <= b.p50,
            "" if same else f"basic-memory measured at {m:,} notes only; its 10,000-note run is behind --bm-10k",
        )
    return out


def goals_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| goal | notes | measured | target | verdict |", "|---|---|---|---|---|"]
    for g in rows:
        note = f" ({g['note']})" if g["note"] else ""
        lines.append(f"| {g['goal']}{note} | {g['notes']:,} | {g['measured']} | {g['target']} | **{g['verdict']}** |")
    return "\n".join(lines)


def to_json(results: Results) -> dict[str, Any]:
    return {str(n): {sys_: {k: f.to_json() for k, f in figs.items()} for sys_, figs in systems.items()} for n, systems in results.items()}

// Lint: every rule's findings in this vault (vault.lint, a read), errors first; each names the
// note and line, what is wrong and, where one exists, the mechanical fix `vaultctl lint --fix`
// would apply. Findings are read again when notes change.
import { call } from "./api.js";
import { clear, el, noteHref } from "./dom.js";

export async function show(root, ctx, route) {
  const code = route.params.code ?? "";
  const summary = el("div", { id: "lint-summary" });
  const table = el("div", { id: "lint-findings" });
  root.append(el("h1", { text: "Lint" }), summary, table);

  async function load() {
    const result = await call("vault.lint", { vault: ctx.vault, limit: 500, ...(code ? { code } : {}) });
    const codes = Object.entries(result.counts).sort(([a], [b]) => a.localeCompare(b));
    const chips = codes.map(([c, n]) =>
      el("a", { class: c === code ? "chip current" : "chip", href: `#/lint?code=${encodeURIComponent(c === code ? "" : c)}`, text: `${c} ${n}` }));
    clear(summary).append(
      el("p", { class: `verdict ${result.verdict}` },
        el("strong", { text: result.verdict.toUpperCase() }),
        ` ${result.errors} error(s), ${result.warnings} warning(s) in ${result.checked} notes (as of ${result.as_of}); `,
        `${result.fixable} fixable with 'vaultctl lint --fix'.`),
      el("p", { class: "chips" }, chips));
    clear(table);
    if (!result.findings.length) {
      table.append(el("p", { class: "hint empty", text: "No finding." }));
      return;
    }
    const rows = result.findings.map((f) =>
      el("tr", { class: `finding lvl-${f.level}`, data: { code: f.code } },
        el("td", {}, el("span", { class: `level ${f.level}`, text: f.level })),
        el("td", {}, el("code", { text: f.code })),
        el("td", {}, el("a", { href: noteHref(ctx.vault, f.note), text: f.note }), f.line ? el("span", { class: "line", text: `:${f.line}` }) : null),
        el("td", { text: f.finding }),
        el("td", { class: "fix" }, f.fix ? el("code", { text: f.fix }) : null)));
    table.append(el("table", { class: "grid" },
      el("thead", {}, el("tr", {}, ["Level", "Rule", "Note", "Finding", "Fix"].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows)));
    if (result.truncated) table.append(el("p", { class: "hint", text: "More findings than shown: choose a rule above, or run 'vaultctl lint'." }));
  }

  await load();
  let timer = null;
  return {
    refresh: load,
    onEvent(event) {
      if (!event.kind.startsWith("note.") && event.kind !== "state.leave") return;
      clearTimeout(timer);
      timer = setTimeout(() => load().catch((err) => ctx.tell(err.message, "error")), 1000);
    },
    leave() {
      clearTimeout(timer);
    },
  };
}

// Status: the daemon and every vault's health, with a live progress bar while an index builds.
import { call } from "./api.js";
import { clear, el } from "./dom.js";

function bar(progress) {
  if (!progress) return null;
  const total = progress.total ?? 0;
  const meter = el("progress", { max: String(Math.max(total, 1)), value: String(progress.parsed) });
  const label = total ? `${progress.parsed.toLocaleString()} / ${total.toLocaleString()} notes parsed` : "listing files…";
  return el("span", { class: "progress" }, meter, " ", el("span", { class: "progress-label", text: label }));
}

export async function show(root, ctx) {
  const daemonBox = el("div", { id: "daemon" });
  const vaultsBox = el("div", { id: "vaults" });
  const statsBox = el("div", { id: "stats" });
  root.append(el("h1", { text: "Status" }), daemonBox, el("h2", { text: "Vaults" }), vaultsBox, el("h2", { text: `This vault: ${ctx.vault}` }), statsBox);
  const cells = new Map();

  async function load() {
    const status = await call("daemon.status");
    const facts = [["version", status.version], ["pid", String(status.pid)], ["uptime", `${Math.round(status.uptime_s)} s`],
      ["socket", status.socket], ["home", status.home]];
    clear(daemonBox).append(el("dl", { class: "fields" }, facts.map(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })])));
    cells.clear();
    const rows = status.vaults.map((v) => {
      const progressCell = el("td", { class: "progress-cell" }, bar(v.progress));
      cells.set(v.id, progressCell);
      return el("tr", { data: { vault: v.id } },
        el("td", {}, el("strong", { text: v.id })),
        el("td", {}, el("span", { class: `state ${v.state}`, text: v.state })),
        el("td", { class: "num", text: v.notes.toLocaleString() }),
        el("td", { class: "num", text: String(v.pending_proposals) }),
        progressCell,
        el("td", { class: "message", text: v.message }),
        el("td", {}, el("code", { text: v.path })));
    });
    clear(vaultsBox).append(el("table", { class: "grid" },
      el("thead", {}, el("tr", {}, ["Vault", "State", "Notes", "Waiting", "Index", "Message", "Path"].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows)));
    try {
      const s = await call("vault.stats", { vault: ctx.vault });
      clear(statsBox).append(el("dl", { class: "fields" },
        ...[["notes", s.notes], ["attachments", s.attachments], ["words", s.words], ["links", s.links], ["dead links", s.dead_links],
          ["ambiguous links", s.ambiguous_links], ["orphans", s.orphans], ["indexing issues", s.issues]]
          .map(([k, v]) => [el("dt", { text: k }), el("dd", { text: Number(v).toLocaleString() })])));
    } catch (err) {
      clear(statsBox).append(el("p", { class: "error", text: err.message }));
    }
  }

  await load();
  return {
    refresh: load,
    onEvent(event) {
      if (event.kind === "index.progress" && !event.meaning) {
        const cell = cells.get(event.vault);
        if (cell) clear(cell).append(bar(event));
      } else if (event.kind === "index.ready" || event.kind === "vault.health") {
        load().catch((err) => ctx.tell(err.message, "error"));
      }
    },
  };
}

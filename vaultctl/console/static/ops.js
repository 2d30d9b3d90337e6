// The operation log: what was applied in this vault, by whom, newest first; Undo previews the
// reversal (op.undo with dry_run) and applies it only when confirmed.
import { call } from "./api.js";
import { clear, el, when } from "./dom.js";

function preview(ctx, op, receipt, panel, reload) {
  const confirm = el("button", { class: "confirm-undo", type: "button", text: "Confirm undo" });
  const cancel = el("button", { type: "button", text: "Cancel" });
  const result = el("p", { class: "result" });
  cancel.addEventListener("click", () => clear(panel));
  confirm.addEventListener("click", async () => {
    confirm.disabled = cancel.disabled = true;
    try {
      const done = await call("op.undo", { vault: ctx.vault, op_id: op.op_id });
      ctx.tell(`Undid ${op.op} ${op.op_id} as operation ${done.op_id}.`, "ok");
      clear(panel);
      await reload();
    } catch (err) {
      result.textContent = err.message;
      result.className = "result error";
      cancel.disabled = false;
    }
  });
  const changes = el("ul", { class: "changes" }, receipt.changes.map((c) =>
    el("li", {}, el("span", { class: `action ${c.action}`, text: c.action }), " ", el("code", { text: c.path }))));
  const warnings = receipt.warnings.map((w) => el("p", { class: "warning", text: `${w.code}: ${w.message}` }));
  clear(panel).append(
    el("h2", { text: `Undo ${op.op} ${op.op_id}?` }),
    el("p", { text: "Nothing is written until you confirm. The undo would change:" }),
    changes, warnings, el("div", { class: "decide" }, confirm, cancel), result);
}

export async function show(root, ctx) {
  const panel = el("div", { id: "undo-preview", class: "panel" });
  const table = el("div", { id: "ops" });
  root.append(el("h1", { text: "Operations" }),
    el("p", { class: "hint", text: "Every change vaultd applied in this vault, kept for undo. An undo is itself an operation." }),
    panel, table);

  async function ask(op, button) {
    button.disabled = true;
    try {
      const receipt = await call("op.undo", { vault: ctx.vault, op_id: op.op_id, dry_run: true });
      preview(ctx, op, receipt, panel, load);
    } catch (err) {
      clear(panel).append(el("p", { class: "error", text: `Cannot undo ${op.op_id}: ${err.message}` }));
    } finally {
      button.disabled = false;
    }
  }

  async function load() {
    const listed = await call("op.list", { vault: ctx.vault, limit: 100 });
    clear(table);
    if (!listed.ops.length) {
      table.append(el("p", { class: "hint", text: "No operation yet." }));
      return;
    }
    const rows = listed.ops.map((op) => {
      const undo = el("button", { class: "undo", type: "button", text: "Undo…", data: { op: op.op_id } });
      undo.addEventListener("click", () => ask(op, undo));
      const by = [op.channel, op.proposed_by ? `proposed by ${op.proposed_by}` : null, op.undoes ? `undoes ${op.undoes}` : null].filter(Boolean).join(", ");
      return el("tr", { data: { op: op.op_id } },
        el("td", { text: when(op.created), title: new Date(op.created * 1000).toLocaleString() }),
        el("td", {}, el("code", { text: op.op })),
        el("td", { text: op.summary }),
        el("td", { class: "paths", text: op.paths.join(", ") }),
        el("td", { text: by }),
        el("td", {}, undo));
    });
    table.append(el("table", { class: "grid" },
      el("thead", {}, el("tr", {}, ["When", "Operation", "What", "Files", "By", ""].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows)));
  }

  await load();
  return {
    refresh: load,
    onEvent(event) {
      if (event.kind === "operation.applied" || event.kind === "operation.undone") load().catch((err) => ctx.tell(err.message, "error"));
    },
  };
}

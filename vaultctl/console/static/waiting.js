// Waiting for you: the agents' proposals pending in this vault, each with its diffs, applied or
// rejected here by a person (proposal.apply, proposal.reject on the editor channel).
import { call } from "./api.js";
import { clear, diffView, el, when } from "./dom.js";

function card(ctx, detail, reload) {
  const result = el("p", { class: "result" });
  const note = el("input", { type: "text", name: "note", placeholder: "Why (shown to the agent)", maxlength: "200" });
  const approve = el("button", { class: "approve", type: "button", text: "Approve" });
  const reject = el("button", { class: "reject", type: "button", text: "Reject" });
  const buttons = [approve, reject];
  async function decide(action) {
    buttons.forEach((b) => (b.disabled = true));
    try {
      if (action === "apply") {
        const receipt = await call("proposal.apply", { vault: ctx.vault, id: detail.id });
        ctx.tell(`Applied proposal ${detail.id} as operation ${receipt.op_id}; undo it from Operations.`, "ok");
      } else {
        const why = note.value.trim() || "rejected in the console";
        await call("proposal.reject", { vault: ctx.vault, id: detail.id, note: why });
        ctx.tell(`Rejected proposal ${detail.id}.`, "ok");
      }
      ctx.refreshWaiting();
      await reload();
    } catch (err) {
      result.textContent = err.message;
      result.className = "result error";
      buttons.forEach((b) => (b.disabled = false));
    }
  }
  approve.addEventListener("click", () => decide("apply"));
  reject.addEventListener("click", () => decide("reject"));
  const diffs = detail.diffs.map((d) =>
    el("details", { class: "file", open: true },
      el("summary", {}, el("span", { class: `action ${d.action}`, text: d.action }), " ", el("code", { text: d.path })),
      d.diff ? diffView(d.diff) : el("p", { class: "hint", text: "Not a text file: no diff." }),
      d.truncated ? el("p", { class: "hint", text: "The diff is cut here." }) : null));
  return el("article", { class: "proposal", data: { id: detail.id } },
    el("header", {},
      el("h2", {}, el("code", { text: detail.op }), " ", detail.summary),
      el("p", { class: "meta", text: `${detail.proposer} · ${when(detail.created)} · ${detail.id}` })),
    detail.reason ? el("p", { class: "reason" }, el("strong", { text: "Reason: " }), detail.reason) : null,
    detail.warnings.length ? el("ul", { class: "warnings" }, detail.warnings.map((w) => el("li", { text: `${w.code}: ${w.message}` }))) : null,
    diffs,
    el("div", { class: "decide" }, approve, reject, note),
    result);
}

export async function show(root, ctx) {
  const list = el("div", { id: "proposals" });
  const decided = el("div", { id: "decided" });
  root.append(el("h1", { text: "Waiting for you" }),
    el("p", { class: "hint", text: "Changes agents proposed in this vault. Approving applies one as an operation you can undo; rejecting tells the agent why." }),
    list, el("h2", { text: "Decided recently" }), decided);

  async function load() {
    const pending = await call("proposal.list", { vault: ctx.vault, limit: 50 });
    clear(list);
    if (!pending.proposals.length) list.append(el("p", { class: "hint empty", text: "Nothing is waiting for you." }));
    for (const summary of pending.proposals) {
      const detail = await call("proposal.show", { vault: ctx.vault, id: summary.id });
      list.append(card(ctx, detail, load));
    }
    const all = await call("proposal.list", { vault: ctx.vault, all: true, limit: 20 });
    clear(decided);
    const rows = all.proposals.filter((p) => p.state !== "pending").map((p) =>
      el("tr", {}, el("td", { text: when(p.decided) }), el("td", { text: p.state }), el("td", {}, el("code", { text: p.op })),
        el("td", { text: p.summary }), el("td", { text: p.decided_by ?? "" }), el("td", { text: p.note ?? "" })));
    decided.append(rows.length
      ? el("table", { class: "grid" }, el("thead", {}, el("tr", {}, ["When", "State", "Operation", "What", "By", "Note"].map((h) => el("th", { text: h })))), el("tbody", {}, rows))
      : el("p", { class: "hint", text: "No decision yet." }));
  }

  await load();
  return {
    refresh: load,
    onEvent(event) {
      if (event.kind === "proposal.created" || event.kind === "proposal.decided") load().catch((err) => ctx.tell(err.message, "error"));
    },
  };
}

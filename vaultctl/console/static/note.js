// A note: its properties as a table, its body rendered by the console's Markdown renderer, its
// backlinks and the dead links in it. The body is the one piece of HTML the page inserts; the
// Content-Security-Policy only lets it in through this Trusted Types policy.
import { readNote } from "./api.js";
import { clear, el, noteHref } from "./dom.js";

const policy = window.trustedTypes
  ? window.trustedTypes.createPolicy("vaultd-note", { createHTML: (html) => html })
  : { createHTML: (html) => html };

function value(v) {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.map(value).join(", ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function properties(frontmatter) {
  const keys = Object.keys(frontmatter ?? {});
  if (!keys.length) return null;
  const rows = keys.map((key) => el("tr", {}, el("th", { scope: "row", text: key }), el("td", { text: value(frontmatter[key]) })));
  return el("table", { class: "properties" }, el("caption", { text: "Properties" }), el("tbody", {}, rows));
}

function sidebar(view) {
  const back = el("ul", { class: "backlinks" });
  const lines = new Map();
  for (const link of view.backlinks) lines.set(link.path, [...(lines.get(link.path) ?? []), link.line]);
  for (const [path, at] of lines) {
    back.append(el("li", {}, el("a", { href: noteHref(view.vault, path), text: path }), el("span", { class: "line", text: ` line ${at.join(", ")}` })));
  }
  const dead = el("ul", { class: "dead-links" });
  for (const link of view.dead) {
    const why = link.status === "missing" ? "no such note" : link.status === "ambiguous" ? "ambiguous" : "no such heading or block";
    dead.append(
      el("li", {},
        el("code", { text: link.anchor ? `${link.target}#${link.anchor}` : link.target }),
        el("span", { class: "why", text: ` line ${link.line}: ${link.reason ?? why}` }),
        link.suggestion ? el("span", { class: "suggestion", text: ` (did you mean ${link.suggestion}?)` }) : null),
    );
  }
  return el("aside", { class: "note-side" },
    el("h2", { text: `Backlinks (${lines.size})` }),
    view.backlinks.length ? back : el("p", { class: "hint", text: "No note links here." }),
    el("h2", { text: `Dead links (${view.dead.length})` }),
    view.dead.length ? dead : el("p", { class: "hint", text: "Every link resolves." }),
    el("p", {}, el("a", { class: "graph-link", href: `#/graph?note=${encodeURIComponent(view.path)}`, text: "Neighbourhood graph" })));
}

export async function show(root, ctx, route) {
  const [vault, target] = route.segments;
  let path = target;
  let banner = null;

  async function load() {
    const view = await readNote(vault, path);
    path = view.path;
    const body = el("article", { class: "markdown", id: "note-body" });
    body.innerHTML = policy.createHTML(view.html);
    const head = el("header", { class: "note-head" },
      el("h1", { id: "note-title", text: view.title || view.path }),
      el("p", { class: "path", text: `${view.vault} / ${view.path}` }));
    clear(root).append(head);
    if (banner) root.append(banner);
    const props = properties(view.frontmatter);
    const column = el("div", { class: "note-main" }, props, body,
      view.truncated ? el("p", { class: "hint", text: "The note is longer than one page; the rest is not shown." }) : null);
    root.append(el("div", { class: "note-layout" }, column, sidebar(view)));
  }

  // Reloads are gathered: a checkout of thousands of files is one reload after its bulk state.
  let timer = null;
  let bulk = false;
  function reloadSoon(delay = 250) {
    clearTimeout(timer);
    timer = setTimeout(() => load().catch((err) => ctx.tell(err.message, "error")), delay);
  }

  await load();
  return {
    refresh: load,
    onEvent(event) {
      if (event.kind === "state.enter") bulk = true;
      if (event.kind === "state.leave") {
        bulk = false;
        reloadSoon();
      }
      if (event.kind === "note.renamed" && event.old_path === path) {
        location.hash = noteHref(vault, event.path);
      } else if (event.kind === "note.removed" && event.path === path) {
        banner = el("p", { class: "error", text: "This note was removed." });
        root.querySelector(".note-head")?.after(banner);
      } else if (bulk) {
        return;
      } else if ((event.kind === "note.changed" || event.kind === "note.created") && event.path === path) {
        reloadSoon(50);
      } else if (event.kind.startsWith("note.") && event.kind !== "note.changed") {
        reloadSoon(); // backlinks and dead links may have changed
      }
    },
    leave() {
      clearTimeout(timer);
    },
  };
}

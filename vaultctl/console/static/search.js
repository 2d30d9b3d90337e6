// Search: the query box, and each hit's title, path and snippet with its matches marked.
import { call } from "./api.js";
import { clear, el, highlighted, noteHref } from "./dom.js";

export async function show(root, ctx, route) {
  const query = route.params.q ?? "";
  const input = el("input", { type: "search", name: "q", placeholder: 'Search the vault: words, "a phrase", tag:#t, path:folder/', value: query, autofocus: true });
  const form = el("form", { class: "search", role: "search" }, input, el("button", { type: "submit", text: "Search" }));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `#/search?q=${encodeURIComponent(input.value)}`;
  });
  const results = el("div", { id: "results" });
  root.append(el("h1", { text: "Search" }), form, results);

  async function run() {
    clear(results);
    if (!query.trim()) {
      results.append(el("p", { class: "hint", text: "Type words to find notes; matches are marked in each snippet." }));
      return;
    }
    const found = await call("note.search", { vault: ctx.vault, query, limit: 50 });
    if (!found.hits.length) {
      results.append(el("p", { class: "hint", text: "No note matches." }));
      if (found.did_you_mean) {
        results.append(el("p", {}, "Did you mean ", el("a", { href: `#/search?q=${encodeURIComponent(found.did_you_mean)}`, text: found.did_you_mean }), "?"));
      }
      return;
    }
    results.append(el("p", { class: "count", text: `${found.hits.length} note(s)` }));
    const list = el("ol", { class: "hits" });
    for (const hit of found.hits) {
      list.append(
        el("li", { class: "hit" },
          el("a", { class: "title", href: noteHref(ctx.vault, hit.path), text: hit.title || hit.path }),
          el("span", { class: "path", text: hit.path }),
          el("p", { class: "snippet" }, highlighted(hit.excerpt || hit.snippet, hit.highlights))),
      );
    }
    results.append(list);
  }

  await run();
  let timer = null;
  return {
    refresh: run,
    onEvent(event) {
      if (!event.kind.startsWith("note.") || !query.trim()) return;
      clearTimeout(timer);
      timer = setTimeout(run, 300);
    },
    leave() {
      clearTimeout(timer);
    },
  };
}

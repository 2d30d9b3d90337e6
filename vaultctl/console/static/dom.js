// Building the page from data without ever parsing data as HTML: every string becomes a text
// node or an attribute value set through the DOM. The one exception is a note's body, which the
// console's Markdown renderer produced (note.js inserts it through the Trusted Types policy).

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "href") node.setAttribute("href", safeHref(value));
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "data") for (const [k, v] of Object.entries(value)) node.dataset[k] = v;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Only the console's own routes are linked from data; anything else is not a link.
export function safeHref(value) {
  const text = String(value);
  return text.startsWith("#/") ? text : "#/";
}

export function noteHref(vault, path) {
  return `#/note/${encodeURIComponent(vault)}/${encodeURIComponent(path)}`;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function when(seconds) {
  if (!seconds) return "";
  const date = new Date(seconds * 1000);
  const ago = (Date.now() - date.getTime()) / 1000;
  if (ago < 60) return "just now";
  if (ago < 3600) return `${Math.floor(ago / 60)} min ago`;
  if (ago < 86400) return `${Math.floor(ago / 3600)} h ago`;
  return date.toLocaleString();
}

// A search excerpt with its highlights ([start, end) in code points) as <mark> elements.
export function highlighted(excerpt, ranges) {
  const chars = Array.from(excerpt);
  const parts = [];
  let at = 0;
  for (const [start, end] of ranges ?? []) {
    if (start < at || end <= start) continue;
    parts.push(chars.slice(at, start).join(""), el("mark", { text: chars.slice(start, end).join("") }));
    at = end;
  }
  parts.push(chars.slice(at).join(""));
  return el("span", { class: "excerpt" }, parts);
}

// A unified diff, one line per element, coloured by its first character.
export function diffView(text) {
  const pre = el("pre", { class: "diff" });
  for (const line of text.split("\n")) {
    const kind = line.startsWith("@@") ? "hunk" : line.startsWith("+++") || line.startsWith("---") ? "file"
      : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
    pre.append(el("span", { class: `line ${kind}`, text: line + "\n" }));
  }
  return pre;
}

export function errorBox(err) {
  return el("p", { class: "error", text: err?.message ?? String(err) });
}

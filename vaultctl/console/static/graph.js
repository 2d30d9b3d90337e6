// A note's neighbourhood (graph.neighbors) drawn as SVG: the note in the middle, the notes one
// link away on a ring around it, two links away on an outer ring near the note that leads there.
// Every shape and label is made with DOM calls; a click on a note centres the graph on it.
import { call } from "./api.js";
import { clear, el, noteHref } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const SIZE = 760;
const RINGS = [0, 190, 330];

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function layout(result) {
  const at = new Map([[result.path, { x: SIZE / 2, y: SIZE / 2, angle: 0 }]]);
  const first = result.neighbors.filter((n) => n.hops === 1);
  first.forEach((n, i) => {
    const angle = (2 * Math.PI * i) / Math.max(first.length, 1) - Math.PI / 2;
    at.set(n.path, { x: SIZE / 2 + RINGS[1] * Math.cos(angle), y: SIZE / 2 + RINGS[1] * Math.sin(angle), angle });
  });
  const further = result.neighbors.filter((n) => n.hops >= 2);
  const spread = (2 * Math.PI) / Math.max(further.length, 1);
  further
    .map((n) => ({ n, base: at.get(n.via)?.angle ?? 0 }))
    .sort((a, b) => a.base - b.base)
    .forEach(({ n }, i) => {
      const angle = spread * i - Math.PI / 2;
      at.set(n.path, { x: SIZE / 2 + RINGS[2] * Math.cos(angle), y: SIZE / 2 + RINGS[2] * Math.sin(angle), angle });
    });
  return at;
}

function draw(result, vault) {
  const at = layout(result);
  const root = svg("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, class: "graph", role: "img", "aria-label": `Links around ${result.title}` });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "22", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }));
  defs.append(marker);
  root.append(defs);
  const edges = svg("g", { class: "edges" });
  for (const edge of result.edges) {
    const a = at.get(edge.source);
    const b = at.get(edge.target);
    if (!a || !b || edge.source === edge.target) continue;
    const line = svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: `edge ${edge.relation === "link" ? "link" : "typed"}`, "marker-end": "url(#arrow)" });
    line.append(svg("title", {}, `${edge.source} → ${edge.target} (${edge.relation})`));
    edges.append(line);
  }
  root.append(edges);
  const titles = new Map([[result.path, result.title], ...result.neighbors.map((n) => [n.path, n.title])]);
  const hops = new Map([[result.path, 0], ...result.neighbors.map((n) => [n.path, n.hops])]);
  for (const [path, p] of at) {
    const node = svg("a", { href: `#/graph?note=${encodeURIComponent(path)}`, class: `node hop${hops.get(path)}` });
    node.dataset.path = path;
    node.append(svg("circle", { cx: p.x, cy: p.y, r: hops.get(path) === 0 ? 16 : 10 }));
    const label = titles.get(path) || path;
    node.append(svg("text", { x: p.x, y: p.y + (hops.get(path) === 0 ? 32 : 24), "text-anchor": "middle" }, label.length > 28 ? `${label.slice(0, 27)}…` : label));
    node.append(svg("title", {}, path));
    root.append(node);
  }
  return root;
}

export async function show(root, ctx, route) {
  const hops = route.params.hops === "2" ? 2 : 1;
  let target = route.params.note;
  if (!target) {
    const hubs = await call("graph.hubs", { vault: ctx.vault, limit: 1 });
    target = hubs.hubs[0]?.path;
  }
  const picker = el("form", { class: "graph-pick" },
    el("input", { type: "text", name: "note", value: target ?? "", placeholder: "A note: path, name or alias" }),
    el("select", { name: "hops" }, el("option", { value: "1", text: "1 link away", selected: hops === 1 }), el("option", { value: "2", text: "2 links away", selected: hops === 2 })),
    el("button", { type: "submit", text: "Draw" }));
  picker.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(picker);
    location.hash = `#/graph?note=${encodeURIComponent(data.get("note"))}&hops=${data.get("hops")}`;
  });
  const canvas = el("div", { id: "graph" });
  const legend = el("p", { class: "hint" });
  root.append(el("h1", { text: "Neighbourhood" }), picker, legend, canvas);
  if (!target) {
    canvas.append(el("p", { class: "hint", text: "No note to draw: this vault has no links yet." }));
    return null;
  }

  async function load() {
    const result = await call("graph.neighbors", { vault: ctx.vault, target, hops, limit: hops === 1 ? 40 : 80 });
    clear(legend).append(
      el("a", { href: noteHref(ctx.vault, result.path), text: result.title || result.path }),
      ` and ${result.neighbors.length} of ${result.total} note(s) within ${hops} link(s)` + (result.truncated ? " (the nearest shown)" : "") +
      ". Arrows point from a note to what it links to; dashed lines are typed relations and properties. Click a note to centre on it.");
    clear(canvas).append(draw(result, ctx.vault));
  }

  await load();
  let timer = null;
  return {
    refresh: load,
    onEvent(event) {
      if (!event.kind.startsWith("note.")) return;
      clearTimeout(timer);
      timer = setTimeout(() => load().catch((err) => ctx.tell(err.message, "error")), 800);
    },
    leave() {
      clearTimeout(timer);
    },
  };
}

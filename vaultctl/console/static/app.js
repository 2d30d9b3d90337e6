// The console's shell: the session, the vault picker, the router between views, and the live
// feed of the vault's events that every view listens to.
import { call, startSession } from "./api.js";
import { clear, el } from "./dom.js";
import * as graph from "./graph.js";
import * as lint from "./lint.js";
import * as note from "./note.js";
import * as ops from "./ops.js";
import * as search from "./search.js";
import * as status from "./status.js";
import * as waiting from "./waiting.js";

const VIEWS = { search, note, waiting, ops, lint, graph, status };
const state = { vault: null, view: null, feed: null, route: null };
const main = document.getElementById("view");
const notice = document.getElementById("notice");

export function tell(message, kind = "info") {
  notice.textContent = message;
  notice.className = kind;
  notice.hidden = !message;
}

function parseRoute() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [pathPart, query = ""] = hash.split("?");
  const segments = pathPart.split("/").filter(Boolean).map(decodeURIComponent);
  const params = Object.fromEntries(new URLSearchParams(query));
  const name = VIEWS[segments[0]] ? segments[0] : "search";
  return { name, segments: segments.slice(1), params };
}

async function refreshWaiting() {
  const badge = document.getElementById("waiting-count");
  try {
    const listed = await call("proposal.list", { vault: state.vault, limit: 1 });
    badge.textContent = String(listed.pending);
    badge.hidden = listed.pending === 0;
  } catch {
    badge.hidden = true;
  }
}

function follow(vault) {
  if (state.feed) state.feed.close();
  const live = document.getElementById("live");
  const feed = new EventSource(`/api/events?vault=${encodeURIComponent(vault)}`);
  state.feed = feed;
  feed.addEventListener("subscribed", (msg) => {
    live.textContent = "live";
    live.className = "live on";
    const info = JSON.parse(msg.data);
    if (info.fresh && state.view?.refresh) state.view.refresh();
  });
  feed.addEventListener("message", (msg) => {
    const event = JSON.parse(msg.data);
    if (event.kind === "proposal.created" || event.kind === "proposal.decided") refreshWaiting();
    if (event.kind === "work.changed") {
      // An agent's declared work, live: started, its progress, finished or cancelled.
      tell(`agent work ${event.id} ${event.state}: ${event.what}${event.progress ? ` (${event.progress})` : ""}`);
    }
    state.view?.onEvent?.(event);
  });
  for (const name of ["dropped", "gone", "refused"]) {
    feed.addEventListener(name, (msg) => {
      live.textContent = "offline";
      live.className = "live off";
      tell(JSON.parse(msg.data).message ?? "live updates stopped", "error");
    });
  }
  feed.onerror = () => {
    live.textContent = "reconnecting";
    live.className = "live off";
  };
}

function setVault(vault) {
  if (!vault || vault === state.vault) return;
  state.vault = vault;
  document.getElementById("vault").value = vault;
  follow(vault);
  refreshWaiting();
}

async function show() {
  const route = parseRoute();
  if (state.route !== null && state.route !== location.hash) tell("");
  state.route = location.hash;
  if (route.name === "note" && route.segments[0]) setVault(route.segments[0]);
  if (route.params.vault) setVault(route.params.vault);
  for (const link of document.querySelectorAll("#nav a")) {
    link.classList.toggle("current", link.dataset.view === route.name);
  }
  state.view?.leave?.();
  state.view = null;
  clear(main);
  main.className = `view-${route.name}`;
  const container = el("section", { class: "view" });
  main.append(container);
  const ctx = { vault: state.vault, tell, refreshWaiting };
  try {
    state.view = (await VIEWS[route.name].show(container, ctx, route)) ?? null;
  } catch (err) {
    container.append(el("p", { class: "error", text: err.message ?? String(err) }));
  }
}

async function start() {
  let session;
  try {
    session = await startSession();
  } catch (err) {
    clear(main).append(el("p", { class: "error", text: `${err.message}` }));
    return;
  }
  const picker = document.getElementById("vault");
  const listed = await call("vault.list");
  for (const info of listed.vaults) picker.append(el("option", { value: info.entry.id, text: info.entry.id }));
  picker.addEventListener("change", () => {
    setVault(picker.value);
    show();
  });
  setVault(session.vault ?? listed.vaults[0]?.entry.id);
  window.addEventListener("hashchange", show);
  await show();
}

start();

// Calls to the console process: each is a daemon method on the editor channel. Every POST carries
// the session's CSRF value; the cookie itself is HttpOnly and never seen here.

let csrf = null;

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `the console answered ${status}`);
    this.status = status;
    this.code = error?.code ?? "INTERNAL";
    this.issues = error?.issues ?? [];
  }
}

export async function startSession() {
  const reply = await fetch("/api/session", { credentials: "same-origin" });
  const body = await reply.json().catch(() => ({}));
  if (!reply.ok) throw new ApiError(reply.status, body.error);
  csrf = body.csrf;
  return body;
}

async function post(path, payload) {
  const reply = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Console-CSRF": csrf ?? "" },
    body: JSON.stringify(payload),
  });
  const body = await reply.json().catch(() => ({}));
  if (!reply.ok) throw new ApiError(reply.status, body.error);
  return body.result ?? body;
}

export function call(method, params = {}) {
  return post("/api/call", { method, params });
}

export function readNote(vault, target) {
  return post("/api/note", { vault, target });
}

// Exchange the one-time token in the address's fragment for the session cookie, then open the
// console. The fragment is never sent to a server; it is taken out of the address bar and the
// history before anything else happens, so a second visit cannot reuse it.
const fragment = new URLSearchParams(location.hash.slice(1));
const token = fragment.get("token");
const vault = fragment.get("vault");
history.replaceState(null, "", "/login");

const status = document.getElementById("login-status");

async function signIn() {
  if (!token) {
    status.textContent = "This address carries no sign-in token. Run 'vaultctl console' to open the console.";
    return;
  }
  let reply;
  try {
    reply = await fetch("/api/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token }),
      credentials: "same-origin",
    });
  } catch (err) {
    status.textContent = "The console does not answer. Run 'vaultctl console' again.";
    return;
  }
  if (reply.ok) {
    location.replace(vault ? `/#/search?vault=${encodeURIComponent(vault)}` : "/#/search");
    return;
  }
  const body = await reply.json().catch(() => null);
  status.textContent = body?.error?.message ?? "Sign-in refused. Run 'vaultctl console' again.";
  status.classList.add("error");
}

signIn();

/// The dashboard the hub serves at `/`: plain HTML, CSS and JavaScript, no build step. It keeps
/// the token in the browser's local storage and follows `/api/events/stream`.
enum Dashboard {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Earshot</title>
<style>
  :root { font-family: system-ui, sans-serif; color-scheme: light dark; }
  body { margin: 0 auto; max-width: 56rem; padding: 1rem; }
  header { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
  h1 { font-size: 1.4rem; margin: 0; }
  #status { font-size: .9rem; opacity: .8; }
  form, .filters { margin: .8rem 0; display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #8884; }
  tr.alert td:first-child { font-weight: 600; color: #c0392b; }
  .hidden { display: none; }
</style>
</head>
<body>
<header><h1>Earshot</h1><span id="status">not connected</span></header>
<form id="login" class="hidden">
  <label>Token <input id="token" type="password" autocomplete="off" size="36"></label>
  <button>Connect</button>
</form>
<div class="filters">
  <label><input type="checkbox" data-kind="alert" checked> alerts</label>
  <label><input type="checkbox" data-kind="sound" checked> sounds</label>
  <label><input type="checkbox" data-kind="test" checked> tests</label>
  <button id="notify" type="button">Notify me in this browser</button>
</div>
<table>
  <thead><tr><th>what</th><th>kind</th><th>when</th><th>confidence</th><th>where</th><th>#</th></tr></thead>
  <tbody id="events"></tbody>
</table>
<script>
"use strict";
const rows = document.getElementById("events");
const status = document.getElementById("status");
const shown = new Set(["alert", "sound", "test"]);
let source = null;

function token() { return localStorage.getItem("earshot-token") || ""; }

function add(event) {
  if (document.getElementById("event-" + event.id)) return;  // never twice
  const row = document.createElement("tr");
  row.id = "event-" + event.id;
  row.className = event.kind;
  row.dataset.kind = event.kind;
  const cells = [event.label.replace(/_/g, " "), event.kind, new Date(event.time).toLocaleString(),
                 event.confidence == null ? "" : event.confidence.toFixed(2), event.source || "", String(event.id)];
  for (const text of cells) { const cell = document.createElement("td"); cell.textContent = text; row.appendChild(cell); }
  row.classList.toggle("hidden", !shown.has(event.kind));
  rows.prepend(row);
  if (event.kind === "alert" && window.Notification && Notification.permission === "granted" && document.hidden) {
    new Notification("Earshot: " + event.label.replace(/_/g, " "), { body: event.source || "", requireInteraction: true });
  }
}

function connect() {
  if (source) source.close();
  source = new EventSource("/api/events/stream?token=" + encodeURIComponent(token()));
  source.onopen = () => { status.textContent = "listening"; document.getElementById("login").classList.add("hidden"); };
  source.onmessage = (message) => add(JSON.parse(message.data));
  source.onerror = () => {
    status.textContent = "reconnecting…";
    fetch("/api/events?limit=1", { headers: { Authorization: "Bearer " + token() } }).then((response) => {
      if (response.status === 401) { source.close(); status.textContent = "token refused"; document.getElementById("login").classList.remove("hidden"); }
    }).catch(() => {});
  };
}

document.getElementById("login").addEventListener("submit", (e) => {
  e.preventDefault();
  localStorage.setItem("earshot-token", document.getElementById("token").value.trim());
  connect();
});
for (const box of document.querySelectorAll("[data-kind]")) {
  box.addEventListener("change", () => {
    box.checked ? shown.add(box.dataset.kind) : shown.delete(box.dataset.kind);
    for (const row of rows.children) row.classList.toggle("hidden", !shown.has(row.dataset.kind));
  });
}
document.getElementById("notify").addEventListener("click", () => { if (window.Notification) Notification.requestPermission(); });

const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromLink) { localStorage.setItem("earshot-token", fromLink); history.replaceState(null, "", "/"); }
if (token()) connect(); else document.getElementById("login").classList.remove("hidden");
</script>
</body>
</html>
"""#
}

/// The dashboard the hub serves at `/`: plain HTML, CSS and JavaScript, no build step. It keeps
/// the token in the browser's local storage, follows `/api/events/stream` for the timeline and
/// `/api/live` for the level meter, spectrum and spectrogram, lists the enrolled sounds from
/// `/api/sounds`, and sets snooze and quiet hours through `/api/settings`.
enum Dashboard {
    static let html = HubPage.head(title: "Earshot", style: #"""
  :root { --alert: #d0342c; --quiet: #8888; }
  body { margin: 0 auto; max-width: 60rem; padding: 1rem; }
  h2 { font-size: 1.05rem; margin: 1.2rem 0 .5rem; }
  #status { font-size: .9rem; opacity: .8; }
  form, .row { margin: .6rem 0; display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #8884; }
  tr.alert td:first-child { font-weight: 600; color: var(--alert); }
  tr.quiet { opacity: .55; }
  .badge { font-size: .75rem; border: 1px solid currentColor; border-radius: .6rem; padding: 0 .4rem; margin-left: .4rem; }
  #live { position: relative; display: grid; grid-template-columns: 2.2rem 1fr; gap: .5rem; border: 2px solid transparent; border-radius: .4rem; padding: .3rem; }
  #live.alerting { border-color: var(--alert); }
  #meter { position: relative; background: #8882; border-radius: .2rem; height: 16rem; }
  #meter .fill { position: absolute; bottom: 0; left: 0; right: 0; background: linear-gradient(to top, #2a9d5c 0%, #2a9d5c 70%, #e9b949 85%, #d0342c 100%); background-size: 100% 16rem; background-position: bottom; }
  #meter .peak { position: absolute; left: 0; right: 0; height: 2px; background: currentColor; }
  .plots { display: grid; grid-template-rows: 8rem 8rem; gap: .3rem; min-width: 0; }
  canvas { width: 100%; height: 100%; display: block; background: #111; border-radius: .2rem; }
  #idle { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; background: #000a; color: #fff; border-radius: .4rem; }
  #readout { font-variant-numeric: tabular-nums; font-size: .9rem; }
  #quietState { font-size: .9rem; }
  button.reject { font-size: .8rem; margin-left: .5rem; }
  .note { font-size: .8rem; margin-left: .5rem; opacity: .8; }
"""#) + #"""
<body>
<header><h1>Earshot</h1><span id="status">not connected</span>
  \#(HubPage.navigation)</header>
<form id="login" class="hidden">
  <label>Token <input id="token" type="password" autocomplete="off" size="36"></label>
  <button>Connect</button>
</form>

<h2>What the microphone hears</h2>
<div id="live">
  <div id="meter" title="level"><div class="fill" style="height:0"></div><div class="peak" style="bottom:0"></div></div>
  <div class="plots"><canvas id="spectrum" width="768" height="160"></canvas><canvas id="spectrogram" width="768" height="160"></canvas></div>
  <div id="idle">no microphone is feeding the hub (earshot listen --hub …)</div>
</div>
<div class="row" id="readout">level — dBFS · peak — dBFS</div>

<h2>Your sounds</h2>
<table id="soundsTable" class="hidden">
  <thead><tr><th>sound</th><th>recordings</th><th>room tone</th><th>rejected false alarms</th><th>enrolled</th></tr></thead>
  <tbody id="sounds"></tbody>
</table>
<p id="noSounds">No sounds enrolled yet. Record your doorbell and run <code>earshot sounds enroll front_door ring.wav</code>.</p>

<h2>Quiet</h2>
<div class="row">
  <span>Snooze sounds for</span>
  <button type="button" data-snooze="15">15 min</button><button type="button" data-snooze="60">1 h</button>
  <button type="button" data-snooze="480">8 h</button><button type="button" data-snooze="0">off</button>
</div>
<form id="quietHours">
  <label>Quiet hours from <input id="quietStart" type="time" value="22:00"></label>
  <label>to <input id="quietEnd" type="time" value="07:00"></label>
  <button>Save</button><button type="button" id="quietClear">No quiet hours</button>
</form>
<div id="quietState">Alerts (alarms, sirens, horns) always come through.</div>

<h2>Events</h2>
<div class="row">
  <label><input type="checkbox" data-kind="alert" checked> alerts</label>
  <label><input type="checkbox" data-kind="sound" checked> sounds</label>
  <label><input type="checkbox" data-kind="test" checked> tests</label>
  <label>label <input id="labelFilter" type="search" size="14" placeholder="any"></label>
  <button id="notify" type="button">Notify me in this browser</button>
</div>
<table>
  <thead><tr><th>what</th><th>kind</th><th>when</th><th>confidence</th><th>where</th><th>#</th></tr></thead>
  <tbody id="events"></tbody>
</table>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const rows = $("events"), status = $("status");
const shown = new Set(["alert", "sound", "test"]);
let source = null, socket = null;

function token() { return localStorage.getItem("earshot-token") || ""; }
function api(path, options = {}) {
  options.headers = Object.assign({ Authorization: "Bearer " + token() }, options.headers || {});
  return fetch(path, options);
}

// ---- Events ----
function visible(row) {
  const text = $("labelFilter").value.trim().toLowerCase();
  return shown.has(row.dataset.kind) && (!text || row.dataset.label.includes(text));
}
function add(event) {
  if ($("event-" + event.id)) return;  // never twice
  const row = document.createElement("tr");
  row.id = "event-" + event.id;
  row.className = event.kind + (event.quiet ? " quiet" : "");
  row.dataset.kind = event.kind;
  row.dataset.label = event.label.toLowerCase();
  const cells = [event.label.replace(/_/g, " "), event.kind, new Date(event.time).toLocaleString(),
                 event.confidence == null ? "" : event.confidence.toFixed(2), event.source || "", String(event.id)];
  for (const text of cells) { const cell = document.createElement("td"); cell.textContent = text; row.appendChild(cell); }
  if (event.quiet) { const badge = document.createElement("span"); badge.className = "badge"; badge.textContent = "quiet"; row.firstChild.appendChild(badge); }
  if (event.kind === "sound") row.firstChild.appendChild(rejectButton(event));
  row.classList.toggle("hidden", !visible(row));
  rows.prepend(row);
  if (!event.quiet && window.Notification && Notification.permission === "granted" && document.hidden) {
    new Notification("Earshot: " + event.label.replace(/_/g, " "), { body: event.source || event.kind, requireInteraction: event.kind === "alert" });
  }
}
// The sentence in an error reply ({"error":{"message":…}}), or its text.
async function reason(reply) {
  const text = await reply.text();
  try { return JSON.parse(text).error.message; } catch { return text; }
}
// Not my doorbell: what was heard becomes evidence against the sound, which is then announced
// only above it.
function rejectButton(event) {
  const button = document.createElement("button");
  button.type = "button"; button.className = "reject";
  button.textContent = "Not my " + event.label.replace(/_/g, " ");
  button.addEventListener("click", async () => {
    button.disabled = true;
    const reply = await api("/api/events/" + event.id + "/reject", { method: "POST" }).catch(() => null);
    const note = document.createElement("span"); note.className = "note";
    note.textContent = !reply ? "the hub cannot be reached" : reply.ok ? "noted: it will not be announced for this again" : await reason(reply);
    button.replaceWith(note);
    if (reply && reply.ok) loadSounds();
  });
  return button;
}
function refilter() { for (const row of rows.children) row.classList.toggle("hidden", !visible(row)); }

function connect() {
  if (source) source.close();
  source = new EventSource("/api/events/stream?token=" + encodeURIComponent(token()));
  source.onopen = () => { status.textContent = "listening"; $("login").classList.add("hidden"); };
  source.onmessage = (message) => add(JSON.parse(message.data));
  source.onerror = () => {
    status.textContent = "reconnecting…";
    api("/api/events?limit=1").then((response) => {
      if (response.status === 401) { source.close(); status.textContent = "token refused"; $("login").classList.remove("hidden"); }
    }).catch(() => {});
  };
  connectLive();
  loadSettings();
  loadSounds();
}

// ---- Live view: frames of /api/live (see LiveFrame) ----
const spectrum = $("spectrum"), spectrogram = $("spectrogram");
const floorDB = -100, topDB = -10;
function parseFrame(buffer) {
  const view = new DataView(buffer);
  const count = view.getUint16(2, true);
  const frame = { alerting: (view.getUint8(1) & 1) !== 0, idle: (view.getUint8(1) & 2) !== 0,
    lowHz: view.getUint16(4, true), highHz: view.getUint16(6, true),
    level: view.getInt16(8, true) / 100, peak: view.getInt16(10, true) / 100, bands: new Float32Array(count) };
  for (let i = 0; i < count; i++) frame.bands[i] = view.getUint8(16 + i) / 2 - 120;
  return frame;
}
function colour(db) {
  const t = Math.max(0, Math.min(1, (db - floorDB) / (topDB - floorDB)));
  // dark blue → purple → orange → pale yellow
  const r = Math.round(255 * Math.min(1, 1.6 * t)), g = Math.round(255 * Math.max(0, 1.4 * t - 0.4)), b = Math.round(255 * (0.35 + 0.5 * Math.sin(Math.PI * t)) * (1 - t * 0.7));
  return `rgb(${r},${g},${b})`;
}
function drawSpectrum(frame) {
  const g = spectrum.getContext("2d"), w = spectrum.width, h = spectrum.height, n = frame.bands.length;
  g.fillStyle = "#111"; g.fillRect(0, 0, w, h);
  g.fillStyle = frame.alerting ? "#e8554e" : "#4fb3d9";
  for (let i = 0; i < n; i++) {
    const t = Math.max(0, Math.min(1, (frame.bands[i] - floorDB) / (topDB - floorDB)));
    g.fillRect(i * w / n, h - t * h, Math.ceil(w / n) - 1, t * h);
  }
  g.fillStyle = "#aaa"; g.font = "11px system-ui";
  for (const hz of [100, 300, 1000, 3000, 10000]) {
    if (hz < frame.lowHz || hz > frame.highHz) continue;
    const x = w * Math.log(hz / frame.lowHz) / Math.log(frame.highHz / frame.lowHz);
    g.fillRect(x, h - 6, 1, 6); g.fillText(hz >= 1000 ? hz / 1000 + "k" : String(hz), x + 2, h - 8);
  }
}
function drawSpectrogram(frame) {
  const g = spectrogram.getContext("2d"), w = spectrogram.width, h = spectrogram.height, n = frame.bands.length;
  g.drawImage(spectrogram, -2, 0);  // scroll left by one column
  for (let i = 0; i < n; i++) { g.fillStyle = colour(frame.bands[i]); g.fillRect(w - 2, h - (i + 1) * h / n, 2, Math.ceil(h / n)); }
  if (frame.alerting) { g.fillStyle = "#e8554e"; g.fillRect(w - 2, 0, 2, 3); }
}
function showLevel(frame) {
  const meter = $("meter"), fraction = (db) => Math.max(0, Math.min(1, (db + 80) / 80));
  meter.querySelector(".fill").style.height = (100 * fraction(frame.level)) + "%";
  meter.querySelector(".peak").style.bottom = (100 * fraction(frame.peak)) + "%";
  $("readout").textContent = `level ${frame.level.toFixed(1)} dBFS · peak ${frame.peak.toFixed(1)} dBFS` + (frame.alerting ? " · alert sounding" : "");
}
function connectLive() {
  if (socket) socket.close();
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(`${scheme}//${location.host}/api/live?token=${encodeURIComponent(token())}`);
  socket.binaryType = "arraybuffer";
  socket.onmessage = (message) => {
    const frame = parseFrame(message.data);
    $("idle").classList.toggle("hidden", !frame.idle);
    $("live").classList.toggle("alerting", frame.alerting);
    if (frame.idle) return;
    showLevel(frame); drawSpectrum(frame); drawSpectrogram(frame);
  };
  socket.onclose = () => { $("idle").classList.remove("hidden"); setTimeout(() => { if (token()) connectLive(); }, 2000); };
}

// ---- Enrolled sounds ----
function loadSounds() {
  api("/api/sounds").then((r) => r.ok ? r.json() : null).then((sounds) => {
    if (!sounds) return;
    const body = $("sounds");
    body.textContent = "";
    for (const sound of sounds) {
      const row = document.createElement("tr");
      row.dataset.sound = sound.name;
      for (const text of [sound.name.replace(/_/g, " "), String(sound.recordings), sound.roomTone ? "yes" : "no", String(sound.rejected),
                          new Date(sound.enrolled).toLocaleDateString()]) {
        const cell = document.createElement("td"); cell.textContent = text; row.appendChild(cell);
      }
      body.appendChild(row);
    }
    $("soundsTable").classList.toggle("hidden", sounds.length === 0);
    $("noSounds").classList.toggle("hidden", sounds.length > 0);
  }).catch(() => {});
}
setInterval(() => { if (token()) loadSounds(); }, 60000);

// ---- Snooze and quiet hours ----
function showSettings(settings) {
  const parts = [];
  if (settings.snoozeUntil) parts.push("Sounds snoozed until " + new Date(settings.snoozeUntil).toLocaleTimeString() + ".");
  if (settings.quietHours) {
    parts.push(`Quiet hours ${settings.quietHours.start}–${settings.quietHours.end} (${settings.timeZone}).`);
    $("quietStart").value = settings.quietHours.start; $("quietEnd").value = settings.quietHours.end;
  }
  parts.push(settings.quietNow ? "Quiet now: sounds are shown but raise no notification." : "Sounds notify.");
  parts.push("Alerts (alarms, sirens, horns) always come through.");
  $("quietState").textContent = parts.join(" ");
}
function loadSettings() { api("/api/settings").then((r) => r.ok ? r.json() : null).then((s) => s && showSettings(s)).catch(() => {}); }
function saveSettings(body) {
  api("/api/settings", { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
    .then(async (r) => { if (r.ok) showSettings(await r.json()); else $("quietState").textContent = await r.text(); });
}
for (const button of document.querySelectorAll("[data-snooze]")) {
  button.addEventListener("click", () => saveSettings({ snoozeMinutes: Number(button.dataset.snooze) }));
}
$("quietHours").addEventListener("submit", (e) => { e.preventDefault(); saveSettings({ quietHours: { start: $("quietStart").value, end: $("quietEnd").value } }); });
$("quietClear").addEventListener("click", () => saveSettings({ quietHours: null }));
setInterval(() => { if (token()) loadSettings(); }, 60000);

// ---- Start ----
$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  localStorage.setItem("earshot-token", $("token").value.trim());
  connect();
});
for (const box of document.querySelectorAll("[data-kind]")) {
  box.addEventListener("change", () => { box.checked ? shown.add(box.dataset.kind) : shown.delete(box.dataset.kind); refilter(); });
}
$("labelFilter").addEventListener("input", refilter);
$("notify").addEventListener("click", () => { if (window.Notification) Notification.requestPermission(); });

const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromLink) { localStorage.setItem("earshot-token", fromLink); history.replaceState(null, "", "/"); }
if (token()) connect(); else $("login").classList.remove("hidden");
</script>
</body>
</html>
"""#
}

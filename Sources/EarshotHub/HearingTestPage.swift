/// The dashboard's hearing-test page at `/hearing-test`: a self-administered pure-tone test for
/// the person at the hub machine. The hub plays each tone on its own output, calibrated; the
/// page never learns which ear or level was played, only that it is time to answer.
enum HearingTestPage {
    static let html = HubPage.head(title: "Earshot · hearing test", style: #"""
  body { margin: 0 auto; max-width: 44rem; padding: 1rem; line-height: 1.45; }
  section { margin-top: 1rem; }
  label { display: block; margin: .5rem 0; }
  .answers { display: flex; gap: 1rem; margin: 1.5rem 0; }
  .answers button { flex: 1; font-size: 1.3rem; padding: 1.2rem .5rem; border-radius: .6rem; }
  .answers button:disabled { opacity: .4; }
  kbd { border: 1px solid #8886; border-radius: .25rem; padding: 0 .3rem; font-size: .85em; }
  #listen { font-size: 1.6rem; text-align: center; margin: 1.5rem 0; min-height: 2.2rem; }
  #countdown { height: .35rem; background: #4fb3d9; width: 0; transition: width linear; }
  #chart svg { max-width: 100%; height: auto; background: #fff; border-radius: .3rem; }
  table { border-collapse: collapse; }
  td, th { padding: .2rem .6rem; border-bottom: 1px solid #8884; text-align: right; }
  .error { color: #d0342c; }
"""#) + #"""
<body>
<header><h1>Hearing test</h1>\#(HubPage.navigation)</header>
<p id="problem" class="error hidden"></p>

<form id="login" class="hidden">
  <label>Token <input id="token" type="password" autocomplete="off" size="36"></label>
  <button>Connect</button>
</form>

<section id="setup" class="hidden">
  <ol>
    <li>Sit somewhere quiet. Put on the headphones this test was calibrated for (<span id="calibration">…</span>), left on the left ear.</li>
    <li>Leave the computer's volume exactly as it was when it was calibrated.</li>
    <li>You will hear short beeping tones, some very soft, in one ear at a time. Some turns are silent on purpose.</li>
    <li>After each tone, say where you heard it: <kbd>L</kbd> or <kbd>←</kbd> left, <kbd>R</kbd> or <kbd>→</kbd> right,
        <kbd>N</kbd> or <kbd>Space</kbd> nothing. Answer "nothing" if you are not sure; guessing makes the result worse.</li>
  </ol>
  <form id="start">
    <label>Your name <input id="person" required maxlength="100" autocomplete="name"></label>
    <label>Test
      <select id="procedure">
        <option value="quick">Quick estimate: tones start soft and grow louder step by step until you hear them (about 5 minutes)</option>
        <option value="hughson-westlake">Standard (Hughson-Westlake, as in a clinic; about 15 minutes)</option>
      </select>
    </label>
    <label>Frequencies
      <select id="frequencies">
        <option value="250,500,1000,2000,3000,4000,6000,8000">250 Hz to 8 kHz, the full audiogram</option>
        <option value="1000,2000,4000">1, 2 and 4 kHz: a screening</option>
        <option value="1000">1 kHz only: a trial run to learn the test</option>
      </select>
    </label>
    <button id="begin">Start the test</button>
  </form>
</section>

<section id="testing" class="hidden">
  <div id="trial">Turn 1</div>
  <div id="listen">Listen…</div>
  <div id="countdown"></div>
  <div class="answers">
    <button id="left" data-answer="left" disabled>◀ Left <kbd>L</kbd></button>
    <button id="none" data-answer="none" disabled>Nothing <kbd>N</kbd></button>
    <button id="right" data-answer="right" disabled>Right ▶ <kbd>R</kbd></button>
  </div>
  <button id="stop" type="button">Stop the test (nothing is saved)</button>
</section>

<section id="done" class="hidden">
  <h2 id="doneTitle">Your audiogram</h2>
  <div id="chart"></div>
  <table id="thresholds"><thead><tr><th>Hz</th><th>left dB HL</th><th>right dB HL</th></tr></thead><tbody></tbody></table>
  <p id="reliability"></p>
  <p>Stored as test <b id="testId"></b>: <code id="showCommand"></code></p>
  <button type="button" id="again">Test again</button>
</section>

<script>
"use strict";
const $ = (id) => document.getElementById(id);
const answerWindowMs = 4000;
let answering = false, answerStarted = 0, timer = null;

function token() { return localStorage.getItem("earshot-token") || ""; }
function show(id) { for (const s of ["setup", "testing", "done"]) $(s).classList.toggle("hidden", s !== id); }
function problem(text) { $("problem").textContent = text; $("problem").classList.toggle("hidden", !text); }
async function call(method, path, body) {
  const response = await fetch(path, { method, headers: { Authorization: "Bearer " + token(), "Content-Type": "application/json" },
                                       body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (response.status === 401) { $("login").classList.remove("hidden"); throw new Error("the token was refused"); }
  if (!response.ok) throw new Error(text);
  return JSON.parse(text);
}

async function load() {
  try {
    const status = await call("GET", "/api/hearing-test");
    if (!status.available) { problem(status.reason); return; }
    $("calibration").textContent = `${status.transducer} earphones, profile “${status.calibration}”`;
    show("setup");
  } catch (error) { problem(error.message); }
}

function setAnswering(on) {
  answering = on;
  for (const button of document.querySelectorAll("[data-answer]")) button.disabled = !on;
  $("listen").textContent = on ? "Where did you hear it?" : "Listen…";
  clearTimeout(timer);
  const bar = $("countdown");
  bar.style.transition = "none"; bar.style.width = on ? "100%" : "0";
  if (on) {
    answerStarted = performance.now();
    requestAnimationFrame(() => { bar.style.transition = `width ${answerWindowMs}ms linear`; bar.style.width = "0"; });
    timer = setTimeout(() => answer("none"), answerWindowMs);  // no answer: not heard
  }
}

function handle(reply) {
  if (reply.state === "answer") { $("trial").textContent = "Turn " + reply.trial; setAnswering(true); return; }
  if (reply.state === "done") finished(reply);
}

async function begin(event) {
  event.preventDefault();
  problem("");
  show("testing"); setAnswering(false);
  try { handle(await call("POST", "/api/hearing-test", { person: $("person").value.trim(), procedure: $("procedure").value,
                                                          frequencies: $("frequencies").value.split(",").map(Number) })); }
  catch (error) { problem(error.message); show("setup"); }
}

async function answer(response) {
  if (!answering) return;
  const seconds = (performance.now() - answerStarted) / 1000;
  setAnswering(false);
  try { handle(await call("POST", "/api/hearing-test/answer", { response, responseSeconds: seconds })); }
  catch (error) { problem(error.message); show("setup"); }
}

function finished(result) {
  show("done");
  $("doneTitle").textContent = "Audiogram of " + result.person;
  $("chart").innerHTML = result.svg;
  const rows = new Map();
  for (const t of result.thresholds) {
    const row = rows.get(t.frequencyHz) || {};
    row[t.ear] = t.thresholdDBHL != null ? String(t.thresholdDBHL) : `no response at ${t.noResponseAtDBHL}`;
    rows.set(t.frequencyHz, row);
  }
  const body = $("thresholds").querySelector("tbody");
  body.textContent = "";
  for (const [hz, row] of [...rows].sort((a, b) => a[0] - b[0])) {
    const tr = document.createElement("tr");
    for (const text of [String(hz), row.left ?? "–", row.right ?? "–"]) { const td = document.createElement("td"); td.textContent = text; tr.appendChild(td); }
    body.appendChild(tr);
  }
  const r = result.reliability;
  $("reliability").textContent = r.flags.length ? "Take this result with care: " + r.flags.join("; ") + "." : "The answers were consistent (catch trials and retest).";
  $("testId").textContent = result.testId;
  $("showCommand").textContent = `earshot audiogram show ${result.testId}`;
}

$("start").addEventListener("submit", begin);
for (const button of document.querySelectorAll("[data-answer]")) button.addEventListener("click", () => answer(button.dataset.answer));
$("stop").addEventListener("click", async () => { setAnswering(false); await call("DELETE", "/api/hearing-test").catch(() => {}); show("setup"); });
$("again").addEventListener("click", () => show("setup"));
document.addEventListener("keydown", (event) => {
  if (!answering || event.target.tagName === "INPUT") return;
  const key = event.key.toLowerCase();
  const response = key === "l" || key === "arrowleft" ? "left" : key === "r" || key === "arrowright" ? "right"
                 : key === "n" || key === " " || key === "arrowdown" ? "none" : null;
  if (response) { event.preventDefault(); answer(response); }
});
$("login").addEventListener("submit", (e) => { e.preventDefault(); localStorage.setItem("earshot-token", $("token").value.trim()); $("login").classList.add("hidden"); load(); });

const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromLink) { localStorage.setItem("earshot-token", fromLink); history.replaceState(null, "", "/hearing-test"); }
if (token()) load(); else $("login").classList.remove("hidden");
</script>
</body>
</html>
"""#
}

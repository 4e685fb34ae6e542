/// The dashboard's sound-check page at `/soundcheck`: record a few seconds in the browser (2 s of
/// quiet, then speech), or open a recording, and see what `earshot soundcheck` would say — the
/// verdict, the numbers, each problem with its fix, the chart — and hear the take played back.
/// The browser's own echo cancellation, noise suppression and gain are turned off: they would
/// hide exactly what the check is for.
enum SoundCheckPage {
    static let html = HubPage.head(title: "Earshot · sound check", style: #"""
  body { margin: 0 auto; max-width: 52rem; padding: 1rem; line-height: 1.45; }
  section { margin-top: 1rem; }
  label { display: block; margin: .5rem 0; }
  #prompt { font-size: 1.6rem; text-align: center; margin: 1.5rem 0; min-height: 2.2rem; }
  #progress { height: .35rem; background: #4fb3d9; width: 0; }
  #verdict { font-size: 1.3rem; font-weight: 600; }
  #verdict.good { color: #2e8b57; }
  #verdict.fix { color: #d0342c; }
  #chart svg { max-width: 100%; height: auto; background: #fff; border-radius: .3rem; }
  table { border-collapse: collapse; }
  td, th { padding: .2rem .6rem; border-bottom: 1px solid #8884; text-align: left; }
  td.number { text-align: right; font-variant-numeric: tabular-nums; }
  .problem { margin: .6rem 0; padding: .5rem .7rem; border-left: .25rem solid #d0342c; background: #d0342c12; }
  .problem b { text-transform: capitalize; }
  .error { color: #d0342c; }
"""#) + #"""
<body>
<header><h1>Sound check</h1>\#(HubPage.navigation)</header>
<p id="problem" class="error hidden"></p>

<form id="login" class="hidden">
  <label>Token <input id="token" type="password" autocomplete="off" size="36"></label>
  <button>Connect</button>
</form>

<section id="setup">
  <p>Check a microphone before it matters: the page records 2 s of quiet (the room's own sound), then
     you speak as you would in a call. It tells you what is wrong, by how much, and what to do.</p>
  <label>Seconds of speech
    <select id="seconds"><option>5</option><option selected>8</option><option>15</option></select>
  </label>
  <button id="record" type="button">Record a sound check</button>
  <label>…or check a recording <input id="file" type="file" accept="audio/*"></label>
</section>

<section id="recording" class="hidden">
  <div id="prompt">Stay quiet…</div>
  <div id="progress"></div>
</section>

<section id="result" class="hidden">
  <p id="verdict"></p>
  <div id="problems"></div>
  <p>Here is what you sound like: <audio id="take" controls></audio></p>
  <div id="chart"></div>
  <table id="metrics"><tbody></tbody></table>
</section>

<script>
"use strict";
const $ = (id) => document.getElementById(id);
const roomToneSeconds = 2, settleSeconds = 0.3;

function token() { return localStorage.getItem("earshot-token") || ""; }
function problem(text) { $("problem").textContent = text; $("problem").classList.toggle("hidden", !text); }

async function check(samples, rate, roomTone) {
  $("prompt").textContent = "Checking…";
  const response = await fetch(`/api/soundcheck?rate=${rate}&roomTone=${roomTone}`, {
    method: "POST", headers: { Authorization: "Bearer " + token(), "Content-Type": "application/octet-stream" }, body: samples.buffer });
  const text = await response.text();
  if (response.status === 401) { $("login").classList.remove("hidden"); throw new Error("the token was refused"); }
  if (!response.ok) throw new Error(text);
  show(JSON.parse(text), samples, rate);
}

// The take as a 16-bit WAV, for the player.
function wav(samples, rate) {
  const bytes = new DataView(new ArrayBuffer(44 + 2 * samples.length));
  const text = (offset, s) => { for (let i = 0; i < s.length; i++) bytes.setUint8(offset + i, s.charCodeAt(i)); };
  text(0, "RIFF"); bytes.setUint32(4, 36 + 2 * samples.length, true); text(8, "WAVEfmt ");
  bytes.setUint32(16, 16, true); bytes.setUint16(20, 1, true); bytes.setUint16(22, 1, true);
  bytes.setUint32(24, rate, true); bytes.setUint32(28, 2 * rate, true); bytes.setUint16(32, 2, true); bytes.setUint16(34, 16, true);
  text(36, "data"); bytes.setUint32(40, 2 * samples.length, true);
  samples.forEach((x, i) => bytes.setInt16(44 + 2 * i, Math.max(-32768, Math.min(32767, Math.round(x * 32767))), true));
  return new Blob([bytes], { type: "audio/wav" });
}

const metricNames = {
  speechLevelDBFS: ["Speech level", "dBFS"], peakDBFS: ["Peak", "dBFS"], noiseFloorDBFS: ["Room tone", "dBFS"],
  snrDB: ["Speech over room tone", "dB"], clippedShare: ["Clipped samples", "%"], humHz: ["Mains hum", "Hz"],
  bandwidthHz: ["Bandwidth", "Hz"], rt60Seconds: ["Reverberation time (RT60)", "s"], dcOffset: ["DC offset", ""] };

function show(reply, samples, rate) {
  const report = reply.report;
  $("recording").classList.add("hidden");
  $("result").classList.remove("hidden");
  $("verdict").className = report.verdict;
  $("verdict").textContent = report.verdict === "good" ? "Good: nothing to fix." : `Fix ${report.problems.length === 1 ? "this" : "these"} first:`;
  const list = $("problems");
  list.textContent = "";
  for (const p of report.problems) {
    const div = document.createElement("div");
    div.className = "problem"; div.dataset.kind = p.kind;
    const kind = document.createElement("b"); kind.textContent = p.kind.replace("-", " ");
    const detail = document.createElement("div"); detail.textContent = p.detail;
    const advice = document.createElement("div"); advice.textContent = "→ " + p.advice;
    div.append(kind, detail, advice);
    list.appendChild(div);
  }
  const body = $("metrics").querySelector("tbody");
  body.textContent = "";
  for (const [key, [name, unit]] of Object.entries(metricNames)) {
    const value = report.metrics[key];
    const shown = value === null ? "none found" : key === "clippedShare" ? (100 * value).toFixed(3)
                : key === "dcOffset" ? value.toFixed(4) : Number.isInteger(value) ? String(value) : value.toFixed(1);
    const tr = document.createElement("tr"); tr.dataset.metric = key;
    for (const [text, cls] of [[name, ""], [shown, "number"], [value === null ? "" : unit, ""]]) {
      const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  $("chart").innerHTML = reply.chartSVG;
  $("take").src = URL.createObjectURL(wav(samples, rate));
}

function phase(text, seconds) {
  $("prompt").textContent = text;
  const bar = $("progress");
  bar.style.transition = "none"; bar.style.width = "0";
  requestAnimationFrame(() => requestAnimationFrame(() => { bar.style.transition = `width ${seconds}s linear`; bar.style.width = "100%"; }));
  return new Promise((done) => setTimeout(done, seconds * 1000));
}

async function record() {
  problem("");
  const speechSeconds = Number($("seconds").value);
  let stream, context;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false, channelCount: 1 } });
    context = new AudioContext();
    const source = context.createMediaStreamSource(stream);
    const tap = context.createScriptProcessor(4096, 1, 1);
    const chunks = [];
    tap.onaudioprocess = (event) => chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
    source.connect(tap); tap.connect(context.destination);  // the tap's output is silence
    $("setup").classList.add("hidden"); $("result").classList.add("hidden"); $("recording").classList.remove("hidden");
    await phase("Stay quiet…", settleSeconds + roomToneSeconds);
    await phase("Now speak, as you would in a call", speechSeconds);
    source.disconnect(); tap.disconnect();
    const rate = context.sampleRate;
    const all = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
    let offset = 0;
    for (const c of chunks) { all.set(c, offset); offset += c.length; }
    // The device's first moments can carry its switch-on thump.
    const take = all.slice(Math.round(settleSeconds * rate), Math.round((settleSeconds + roomToneSeconds + speechSeconds) * rate));
    await check(take, rate, roomToneSeconds);
  } catch (error) {
    problem(error.name === "NotAllowedError" ? "The browser was not allowed to use the microphone." : error.message);
    $("recording").classList.add("hidden");
  } finally {
    if (stream) stream.getTracks().forEach((t) => t.stop());
    if (context) context.close();
    $("setup").classList.remove("hidden");
  }
}

async function openRecording(file) {
  problem("");
  try {
    const context = new AudioContext();
    const decoded = await context.decodeAudioData(await file.arrayBuffer());
    context.close();
    const mono = new Float32Array(decoded.length);
    for (let c = 0; c < decoded.numberOfChannels; c++) decoded.getChannelData(c).forEach((x, i) => { mono[i] += x / decoded.numberOfChannels; });
    $("recording").classList.remove("hidden");
    await check(mono, decoded.sampleRate, 0);
  } catch (error) {
    problem(error.message || "the recording could not be read");
    $("recording").classList.add("hidden");
  }
}

$("record").addEventListener("click", record);
$("file").addEventListener("change", () => { if ($("file").files.length) openRecording($("file").files[0]); });
$("login").addEventListener("submit", (e) => { e.preventDefault(); localStorage.setItem("earshot-token", $("token").value.trim()); $("login").classList.add("hidden"); });

const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromLink) { localStorage.setItem("earshot-token", fromLink); history.replaceState(null, "", "/soundcheck"); }
if (!token()) $("login").classList.remove("hidden");
</script>
</body>
</html>
"""#
}

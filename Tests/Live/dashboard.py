#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium (driven by Playwright) against a real hub,
fed by `earshot listen` through a real sound server.

A private PulseAudio carries the live path's sinks (`room`, whose monitor is the microphone, and
`headphones`) and `ears`, a stereo sink where the hub plays the hearing test's tones. The script:

- plays a steady 2 kHz tone into the room; the live view must leave its idle state, show about
  20 frames a second, a level, and a spectrum whose strongest band is at 2 kHz;
- lists an enrolled sound, posts events and checks the timeline, its filters, snooze and quiet
  hours;
- has `earshot watch` announce the enrolled chime from a recording, and says "not my front door"
  about it on the page: the hub keeps it as a rejected recording of that sound;
- takes the hearing test on the page as a simulated listener with known thresholds (20 dB HL
  left, 45 dB HL right at 1 kHz) who "hears" by recording `ears.monitor`: each tone's ear and
  level are measured from what the hub actually played, turned into dB HL with the calibration,
  and answered with the keyboard. The stored audiogram must come out at those thresholds.
- runs the sound check on the page with Chromium's microphone fed a known take (room tone, then
  voiced syllables at -20 dBFS over 50 Hz mains hum 20 dB under them): the hum must be found and
  the speech level read within 3 dB; then checks a clipped recording opened from a file.

Screenshots of every page go to --screenshots. Exit 1 on failure.
"""
import argparse, json, os, re, shlex, shutil, subprocess, sys, tempfile, time, urllib.request
import numpy as np

from sound_server import PROBE_MODULES, RATE, SoundServer
from test_signals import syllables

# Float samples: a 16-bit sink would round the softest tones (0 dB HL is about -93 dBFS here).
EARS_MODULE = f"module-null-sink sink_name=ears format=float32le channels=2 rate={RATE} channel_map=front-left,front-right"
FULL_SCALE_SPL = 100.0      # the test profile: a full-scale sine is 100 dB SPL at every frequency
RETSPL_1K = 7.0             # supra-aural earphones at 1 kHz (ISO 389-1), as Earshot's calibration uses
LISTENER = {"left": 20.0, "right": 45.0}  # the simulated listener's thresholds at 1 kHz, dB HL

failures = []


def check(condition, what):
    print(("  ok  " if condition else "  FAIL ") + what)
    if not condition:
        failures.append(what)


def post(url, token, event):
    request = urllib.request.Request(url + "/api/events", data=json.dumps(event).encode(), method="POST",
                                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=10))["id"]


def start_hub(earshot, data, profile, env):
    hub = subprocess.Popen([earshot, "serve", "--port", "0", "--data", data, "--calibration", profile],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = ""
    deadline = time.time() + 20
    while time.time() < deadline:
        line = hub.stdout.readline()
        if not line:
            break
        text += line
        if "Earshot hub on http://" in text and "hearing test:" in text:
            break
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", text)
    token = re.search(r"token: (\S+)", text)
    if not found or not token:
        sys.exit("dashboard test: the hub did not start:\n" + text)
    return hub, f"http://127.0.0.1:{found.group(1)}", token.group(1)


def count_frames(page, seconds=2):
    """The frames /api/live delivers to the page in `seconds`, parsed."""
    return page.evaluate("""(ms) => new Promise((done) => {
        const seen = [];
        const count = (m) => seen.push(parseFrame(m.data));
        socket.addEventListener("message", count);
        setTimeout(() => { socket.removeEventListener("message", count); done(seen.map((f) => ({
            idle: f.idle, level: f.level, low: f.lowHz, high: f.highHz, bands: Array.from(f.bands) }))); }, ms);
    })""", seconds * 1000)


def sign_in(context, url, token):
    """Every page asks for the token when it has none, refuses a wrong one, and keeps a good one."""
    page = context.new_page()
    for path in ("/", "/hearing-test", "/soundcheck"):
        page.goto(url + path)
        page.wait_for_selector("#login", state="visible", timeout=5000)
        check(page.is_visible("#login"), f"{path} asks for a token")
    page.goto(url + "/")
    page.wait_for_selector("#login", state="visible", timeout=5000)
    page.fill("#token", "not-the-token")
    page.click("#login button")
    page.wait_for_function("document.getElementById('status').textContent === 'token refused'", timeout=5000)
    check(page.is_visible("#login"), "a wrong token brings the form back")
    page.fill("#token", token)
    page.click("#login button")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('connected')", timeout=5000)
    check(not page.is_visible("#login"), "the right token connects and the form goes")
    page.goto(url + "/soundcheck")
    check(not page.is_visible("#login"), "the token is kept for the other pages")
    page.close()
    fresh = context.browser.new_context().new_page()
    fresh.goto(f"{url}/?token={token}")
    fresh.wait_for_function("document.getElementById('status').textContent.startsWith('connected')", timeout=5000)
    check("token" not in fresh.url, "a ?token= link signs in too, and the token leaves the address bar")
    fresh.close()


def idle_view(page):
    print("idle live view")
    page.wait_for_function("typeof socket !== 'undefined' && socket && socket.readyState === 1", timeout=10000)
    frames = count_frames(page)
    check(30 <= len(frames) <= 50 and all(f["idle"] for f in frames), f"with no microphone, idle frames about 20 a second ({len(frames)} in 2 s)")
    check(page.is_visible("#idle") and not page.is_visible("#live"), "the live view collapses to a card saying no microphone feeds the hub")
    check(f"earshot listen --hub {page.url.split('/#')[0].rstrip('/')}" in page.inner_text("#listenCommand"), "the card names the command, with this hub's address")
    page.wait_for_function("document.getElementById('status').textContent === 'connected · no microphone yet'", timeout=5000)
    check(True, "the header says no microphone yet")


def live_view(page, screenshots):
    print("live view")
    page.wait_for_function("document.getElementById('idle').classList.contains('hidden')", timeout=15000)
    time.sleep(1.5)  # past listen's first moments
    # The hub sends idle frames once its source has been silent 0.5 s, as it must when a real
    # sound server stalls the capture that long on a loaded machine; so up to three windows are
    # heard, and one must be live throughout.
    stalls = []
    for _ in range(3):
        frames = count_frames(page)
        live = [f for f in frames if not f["idle"]]
        if live and len(live) == len(frames):
            break
        stalls.append(len(frames) - len(live))
    check(30 <= len(frames) <= 50, f"about 20 frames a second ({len(frames)} in 2 s)")
    check(len(live) == len(frames), "every frame comes from the microphone while listen feeds the hub"
          + (f" (idle frames in earlier windows: {stalls})" if stalls else ""))
    if live:
        last = live[-1]
        bands = np.array(last["bands"])
        strongest = int(np.argmax(bands))
        centre = last["low"] * (last["high"] / last["low"]) ** ((strongest + 0.5) / len(bands))
        check(abs(np.log2(centre / 2000)) < 0.15, f"the spectrum's strongest band is at the 2 kHz tone ({centre:.0f} Hz)")
        check(-40 < last["level"] < -15, f"the level meter reads the tone's level ({last['level']:.1f} dBFS)")
    check(re.search(r"level -\d+\.\d dBFS", page.inner_text("#readout")) is not None, "the readout shows the level")
    check(page.inner_text("#scale").split() == ["0", "dB", "−20", "−40", "−60", "−80"], f"the meter has a scale ({page.inner_text('#scale').split()})")
    check(page.inner_text("#status") == "connected · microphone live", "the header says the microphone is live")
    page.screenshot(path=f"{screenshots}/dashboard-live.png", full_page=True)


def events_and_quiet(page, url, token, screenshots):
    print("enrolled sounds, timeline, filters, snooze and quiet hours")
    page.wait_for_selector("[data-sound=front_door]", timeout=5000)
    check("front door" in page.inner_text("[data-sound=front_door]"), "the enrolled sound is listed")
    alert = post(url, token, {"kind": "alert", "label": "smoke_alarm", "time": time.time(), "confidence": 0.97, "source": "kitchen"})
    bell = post(url, token, {"kind": "sound", "label": "doorbell", "time": time.time(), "confidence": 0.88, "source": "hall"})
    # Stored later, happened earlier (a producer's spool emptied late): it sorts below.
    late = post(url, token, {"kind": "sound", "label": "kettle", "time": time.time() - 3600, "confidence": 0.6})
    page.wait_for_selector(f"#event-{late}", timeout=5000)
    order = page.eval_on_selector_all("#events tr", "rows => rows.map(r => r.id)")
    check(order.index(f"event-{bell}") < order.index(f"event-{alert}") < order.index(f"event-{late}"), f"events newest first by time ({order})")
    check(page.inner_text(f"#event-{alert} td.number") == "97 %", f"confidence as a percentage ({page.inner_text(f'#event-{alert} td.number')})")
    check(re.fullmatch(r"\d\d:\d\d:\d\d( [AP]M)?", page.inner_text(f"#event-{alert} td:nth-child(3)")) is not None,
          f"today's event shows its time ({page.inner_text(f'#event-{alert} td:nth-child(3)')})")
    check("smoke alarm" in page.inner_text(f"#event-{alert}") and "kitchen" in page.inner_text(f"#event-{alert}"),
          "an alert appears in the timeline with its place")
    page.uncheck("[data-kind=alert]")
    check(not page.is_visible(f"#event-{alert}") and page.is_visible(f"#event-{bell}"), "the alert filter hides alerts only")
    page.check("[data-kind=alert]")
    page.fill("#labelFilter", "door")
    check(not page.is_visible(f"#event-{alert}") and page.is_visible(f"#event-{bell}"), "the label filter keeps the doorbell only")
    page.fill("#labelFilter", "")
    page.click("[data-snooze='15']")
    page.wait_for_function("document.getElementById('quietState').textContent.includes('snoozed until')", timeout=5000)
    quiet = post(url, token, {"kind": "sound", "label": "washing_machine", "time": time.time()})
    loud = post(url, token, {"kind": "alert", "label": "siren", "time": time.time()})
    page.wait_for_selector(f"#event-{loud}", timeout=5000)
    check("quiet" in page.get_attribute(f"#event-{quiet}", "class"), "a sound during the snooze is marked quiet")
    check("quiet" not in page.get_attribute(f"#event-{loud}", "class"), "an alert during the snooze is not")
    page.click("[data-snooze='0']")
    page.wait_for_function("document.getElementById('quietState').textContent.includes('Sounds notify')", timeout=5000)
    page.fill("#quietStart", "22:30")
    page.fill("#quietEnd", "06:45")
    page.click("#quietHours button")
    page.wait_for_function("document.getElementById('quietState').textContent.includes('Quiet hours 22:30–06:45')", timeout=5000)
    check(True, "snooze ends and quiet hours are saved from the page")
    page.screenshot(path=f"{screenshots}/dashboard-events.png", full_page=True)


def not_my_doorbell(page, earshot, work, url, token, screenshots):
    print("not my doorbell")
    # `earshot watch` hears the chime in a recording and keeps what it heard with the event.
    rate = 16_000
    rng = np.random.default_rng(7)
    scene = 0.01 * rng.standard_normal(6 * rate)
    t = np.arange(int(0.4 * rate)) / rate
    ring = np.concatenate([0.1 * np.exp(-5 * t) * (np.sin(2 * np.pi * f * t) + 0.4 * np.sin(2 * np.pi * 3 * f * t)) for f in (660, 550)])
    scene[2 * rate:2 * rate + len(ring)] += ring
    import wave
    with wave.open(f"{work}/heard.wav", "wb") as out:
        out.setnchannels(1); out.setsampwidth(2); out.setframerate(rate)
        out.writeframes((scene * 32767).astype("<i2").tobytes())
    watched = subprocess.run([earshot, "watch", f"{work}/heard.wav", "--no-alerts", "--data", f"{work}/hub", "--hub", url, "--token", token],
                             capture_output=True, text=True)
    check(watched.returncode == 0 and '"label":"front_door"' in watched.stdout, f"watch announced the chime ({watched.stdout.strip()})")
    button = page.wait_for_selector("tr.sound:has-text('front door') button.reject", timeout=5000)
    check("Not my front door" in button.inner_text(), "a sound event offers 'Not my front door'")
    button.click()
    page.wait_for_selector("tr.sound:has-text('front door') .note", timeout=5000)
    check("will not be announced" in page.inner_text("tr.sound:has-text('front door') .note"), "the hub took it as a false alarm")
    try:
        page.wait_for_function("document.querySelector('[data-sound=front_door]').children[3].textContent === '1'", timeout=10000)
        check(True, "the sound's list shows one rejected recording")
    except Exception:
        check(False, "the sound's list shows one rejected recording (it shows: " + page.inner_text("[data-sound=front_door]") + ")")
    # An event nobody kept a recording of offers nothing it cannot do.
    other = post(url, token, {"kind": "sound", "label": "front_door", "time": time.time()})
    page.wait_for_selector(f"#event-{other}", timeout=5000)
    check(page.query_selector(f"#event-{other} button.reject") is None, "an event without a kept recording offers no 'Not my front door'")
    page.screenshot(path=f"{screenshots}/dashboard-not-my-doorbell.png", full_page=True)


class Ears:
    """The simulated listener's ears: `ears.monitor` recorded, read since the last answer."""

    def __init__(self, server):
        self.path = f"{server.dir}/ears.f32"
        self.recorder = subprocess.Popen(["parec", "--device=ears.monitor", "--raw", "--format=float32le", f"--rate={RATE}",
                                          "--channels=2", "--latency-msec=20"], env=server.env, stdout=open(self.path, "wb"))
        self.read_frames = 0

    def heard(self):
        """The ear and dB HL of the tone since the last call (None: silence)."""
        time.sleep(0.3)  # the tone's last samples through the sound server
        audio = np.fromfile(self.path, np.float32)
        audio = audio[: len(audio) // 2 * 2].reshape(-1, 2)[self.read_frames:]
        self.read_frames += len(audio)
        peaks = np.abs(audio).max(axis=0) if len(audio) else np.zeros(2)
        if peaks.max() < 1e-6:
            return None
        ear = "left" if peaks[0] > peaks[1] else "right"
        return ear, 20 * np.log10(peaks.max()) + FULL_SCALE_SPL - RETSPL_1K

    def stop(self):
        self.recorder.terminate()
        self.recorder.wait()


def hearing_test(page, url, server, screenshots):
    print("hearing test")
    page.goto(url + "/hearing-test")
    page.wait_for_selector("#setup:not(.hidden)", timeout=5000)
    check("supra-aural" in page.inner_text("#calibration"), "the page names the calibration")
    page.wait_for_function("document.getElementById('duration').textContent.startsWith('This test takes about')", timeout=5000)
    check(True, f"the page says how long the test takes ({page.inner_text('#duration')})")
    page.fill("#person", "Ada Listener")
    page.select_option("#procedure", "quick")
    page.select_option("#frequencies", "1000")
    page.screenshot(path=f"{screenshots}/hearing-test-setup.png", full_page=True)
    ears = Ears(server)
    try:
        time.sleep(0.3)
        page.click("#begin")
        played = []
        for _ in range(120):
            try:
                page.wait_for_function("document.getElementById('listen').textContent.startsWith('Where')"
                                       " || !document.getElementById('done').classList.contains('hidden')", timeout=20000)
            except Exception:
                check(False, f"turn {len(played) + 1} comes (the page says: {page.inner_text('#problem')!r})")
                raise
            if page.is_visible("#done"):
                break
            tone = ears.heard()
            played.append(tone)
            if len(played) == 1:
                progress = page.inner_text("#trial")
                check(re.fullmatch(r"Ear 1 of 2 \((left|right)\), tone 1 of 1", progress) is not None, f"the page says where the test is ({progress!r})")
                check(re.fullmatch(r"About \d+ minutes? left|Less than a minute left", page.inner_text("#timeLeft")) is not None,
                      f"and about how long is left ({page.inner_text('#timeLeft')!r})")
            if len(played) == 3:
                page.screenshot(path=f"{screenshots}/hearing-test-answer.png", full_page=True)
            heard = tone is not None and tone[1] >= LISTENER[tone[0]] - 0.01
            page.keyboard.press(("l" if tone[0] == "left" else "r") if heard else "n")
            page.wait_for_function("!document.getElementById('listen').textContent.startsWith('Where')", timeout=5000)
        else:
            check(False, "the test ends")
    finally:
        ears.stop()
    page.wait_for_selector("#done:not(.hidden)", timeout=20000)
    tones = [t for t in played if t is not None]
    print(f"  {len(played)} turns, {len(played) - len(tones)} silent; levels played (dB HL): "
          + ", ".join(f"{e[0]}{round(l)}" for e, l in tones))
    check(all(abs(l - round(l / 5) * 5) < 0.5 for _, l in tones), "every tone measured at its calibrated level (a 5 dB step, ±0.5 dB)")
    rows = [[cell.inner_text() for cell in row.query_selector_all("td")] for row in page.query_selector_all("#thresholds tbody tr")]
    check(len(rows) == 1 and rows[0][0] == "1000", f"the audiogram has 1 kHz ({rows})")
    headers = [cell.inner_text() for cell in page.query_selector_all("#thresholds th")]
    check(headers[1].startswith("right") and headers[2].startswith("left"), f"the table lists the right ear first, as the chart's legend ({headers})")
    if rows and len(rows[0]) == 3:
        for ear, text in (("right", rows[0][1]), ("left", rows[0][2])):
            value = float(text) if re.fullmatch(r"-?\d+(\.\d+)?", text) else None
            check(value is not None and abs(value - LISTENER[ear]) <= 5, f"{ear} threshold {text} dB HL (listener: {LISTENER[ear]:.0f})")
    check(page.query_selector("#chart svg") is not None, "the audiogram is drawn")
    check(re.fullmatch(r"\d+", page.inner_text("#testId")) is not None, "the result is stored with an id")
    summary = page.inner_text("#summary")
    check("Right ear:" in summary and "Left ear:" in summary and "pure-tone average" in summary, f"the result says each ear's pure-tone average or why not ({summary[:120]!r})")
    chart = page.inner_html("#chart")
    check("moderately severe" in chart and "right ear:" in chart, "the chart labels the grades and each ear")
    page.screenshot(path=f"{screenshots}/hearing-test-result.png", full_page=True)
    return page.inner_text("#showCommand")


def voice(seconds, quiet_seconds, level_dbfs, rate, seed):
    """Room tone (-60 dBFS), then voiced syllables at `level_dbfs` (active level)."""
    rng = np.random.default_rng(seed)
    quiet = int(quiet_seconds * rate)
    talk = syllables(rng, seconds - quiet_seconds, rate, level_dbfs=level_dbfs)
    return np.concatenate([np.zeros(quiet), talk]) + 0.001 * rng.standard_normal(quiet + len(talk))


def write_wav(path, x, rate):
    import wave
    with wave.open(path, "wb") as out:
        out.setnchannels(1); out.setsampwidth(2); out.setframerate(rate)
        out.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


def sound_check(page, url, work, earshot, screenshots):
    """The browser's microphone is Chromium's fake device playing `microphone.wav`."""
    print("sound check")
    page.goto(url + "/soundcheck")
    page.select_option("#seconds", "5")
    page.click("#record")
    page.wait_for_selector("#result:not(.hidden)", timeout=40000)
    kinds = page.eval_on_selector_all("#problems .problem", "els => els.map(e => e.dataset.kind)")
    number = lambda key: page.inner_text(f'#metrics tr[data-metric="{key}"] td.number')
    print(f"  recorded: problems {kinds}, speech {number('speechLevelDBFS')} dBFS, hum {number('humHz')}, SNR {number('snrDB')} dB")
    check("hum" in kinds and number("humHz") == "50", "the sound check finds the 50 Hz hum under the voice")
    check(abs(float(number("speechLevelDBFS")) + 20) <= 3, f"the speech level reads {number('speechLevelDBFS')} dBFS (played at -20)")
    check(page.inner_text("#verdict").startswith("Fix"), "the verdict says what to fix")
    check(all(page.inner_text(f"#problems .problem[data-kind='{k}']").count("→") == 1 for k in kinds), "each problem carries one fix")
    check(page.query_selector("#chart svg") is not None, "the chart is drawn")
    check((page.get_attribute("#take", "src") or "").startswith("blob:"), "the take can be played back")
    page.screenshot(path=f"{screenshots}/soundcheck-recorded.png", full_page=True)
    page.set_input_files("#file", f"{work}/clipped.wav")
    try:
        page.wait_for_selector("#problems .problem[data-kind='clipping']", timeout=40000)
        check(True, "a clipped recording opened from a file is found clipping")
    except Exception:
        check(False, f"a clipped recording opened from a file is found clipping (the page says: {page.inner_text('#problem')!r})")
    # One judgement: the command line on the same file finds the same problems and numbers.
    cli = json.loads(subprocess.run([earshot, "soundcheck", f"{work}/clipped.wav", "--format", "json"], capture_output=True, text=True).stdout)
    kinds = page.eval_on_selector_all("#problems .problem", "els => els.map(e => e.dataset.kind)")
    check(kinds == [p["kind"] for p in cli["problems"]] and page.get_attribute("#verdict", "class") == cli["verdict"],
          f"the page and `earshot soundcheck` agree on the file ({kinds} vs {[p['kind'] for p in cli['problems']]})")
    shown = page.inner_text('#metrics tr[data-metric="snrDB"] td.number')
    check(abs(float(shown) - cli["metrics"]["snrDB"]) <= 0.05, f"and on its numbers (SNR {shown} on the page, {cli['metrics']['snrDB']:.2f} dB from the command line)")
    chart = page.inner_html("#chart")
    check("Sound check: clipped.wav" in chart and ">8 kHz<" in chart and ">10 kHz<" not in chart, "the chart is named after the file and its axis ends at the file's 8 kHz")
    page.screenshot(path=f"{screenshots}/soundcheck-file.png", full_page=True)


def phone_and_desktop(browser, url, token, screenshots):
    """Every page at a phone's 390 px and a desktop's 1280 px: nothing wider than the screen."""
    print("phone and desktop widths")
    for width, height in ((390, 844), (1280, 900)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.goto(f"{url}/#token={token}")
        page.wait_for_function("document.getElementById('status').textContent.startsWith('connected')", timeout=5000)
        time.sleep(1)
        for path, name in (("/", "dashboard"), ("/hearing-test", "hearing-test"), ("/soundcheck", "soundcheck")):
            if path != "/":
                page.goto(url + path)
                time.sleep(0.5)
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            check(overflow <= 0, f"{name} fits {width} px ({overflow} px too wide)")
            page.screenshot(path=f"{screenshots}/{name}-{width}.png", full_page=True)
        context.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--earshot", required=True)
    p.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    p.add_argument("--screenshots", default=".build/screenshots")
    a = p.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sys.exit("dashboard test: Playwright is not installed (make live-deps installs it)")
    if not os.path.exists(a.chromium):
        sys.exit("dashboard test: Chromium is not installed (make live-deps installs it)")
    os.makedirs(a.screenshots, exist_ok=True)
    earshot = os.path.abspath(a.earshot)

    server = SoundServer(PROBE_MODULES + [EARS_MODULE])
    work = tempfile.mkdtemp(prefix="earshot-dashboard-")
    procs = []
    try:
        server.start()
        profile = f"{work}/headphones.json"
        levels = ",".join(f"{f}={FULL_SCALE_SPL:g}" for f in (125, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000))
        subprocess.run([earshot, "calibration", "create", "--name", "test headphones", "--measured", levels, "-o", profile],
                       check=True, capture_output=True)
        # An enrolled sound for the dashboard's list: a two-note chime (each note with its third
        # harmonic) with quiet around it.
        rate = 16_000
        t = np.arange(int(0.4 * rate)) / rate
        chime = np.concatenate([np.zeros(rate), *(0.3 * np.exp(-5 * t) * (np.sin(2 * np.pi * f * t) + 0.4 * np.sin(2 * np.pi * 3 * f * t)) for f in (660, 550)), np.zeros(rate)])
        import wave
        with wave.open(f"{work}/ring.wav", "wb") as out:
            out.setnchannels(1); out.setsampwidth(2); out.setframerate(rate)
            out.writeframes((chime * 32767).astype("<i2").tobytes())
        subprocess.run([earshot, "sounds", "enroll", "front_door", f"{work}/ring.wav", "--data", f"{work}/hub"], check=True, capture_output=True)
        hub, url, token = start_hub(earshot, f"{work}/hub", profile, dict(server.env, PULSE_SINK="ears"))
        procs.append(hub)
        playwright = sync_playwright().start()
        # The page's microphone: a take with 50 Hz hum under the voice (looped by Chromium).
        take = voice(14, 2.8, -20, 48_000, seed=7)
        take += 0.012 * np.sin(2 * np.pi * 50 * np.arange(len(take)) / 48_000)
        write_wav(f"{work}/microphone.wav", take, 48_000)
        write_wav(f"{work}/clipped.wav", np.clip(voice(6, 1, -12, 16_000, seed=8) * 4, -0.25, 0.25), 16_000)
        browser = playwright.chromium.launch(executable_path=a.chromium, args=[
            "--no-sandbox", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={work}/microphone.wav"])
        sign_in(browser.new_context(), url, token)
        page = browser.new_context(viewport={"width": 1280, "height": 1200}).new_page()
        page.goto(f"{url}/#token={token}")
        idle_view(page)
        listen = subprocess.Popen([earshot, "listen", "--hub", url, "--token", token],
                                  env=dict(server.env, PULSE_SOURCE="room.monitor", PULSE_SINK="headphones"),
                                  stdout=subprocess.DEVNULL, stderr=open(f"{work}/listen.log", "w"))
        procs.append(listen)
        tone = (0.1 * np.sin(2 * np.pi * 2000 * np.arange(40 * RATE) / RATE)).astype(np.float32)
        tone.tofile(f"{work}/tone.f32")
        procs.append(subprocess.Popen(["pacat", "--playback", "--device=room", "--raw", "--format=float32le", f"--rate={RATE}",
                                       "--channels=1", f"{work}/tone.f32"], env=server.env))
        live_view(page, a.screenshots)
        events_and_quiet(page, url, token, a.screenshots)
        not_my_doorbell(page, earshot, work, url, token, a.screenshots)
        show_command = hearing_test(page, url, server, a.screenshots)
        sound_check(page, url, work, earshot, a.screenshots)
        phone_and_desktop(browser, url, token, a.screenshots)
        browser.close()
        playwright.stop()
        # The command the result page prints, run as written.
        words = shlex.split(show_command)
        shown = subprocess.run([earshot] + words[1:], capture_output=True, text=True) if words[:1] == ["earshot"] else None
        check(shown is not None and shown.returncode == 0 and "Ada Listener" in shown.stdout,
              f"the command the page prints finds the stored test ({show_command})")
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"screenshots in {a.screenshots}")
    if failures:
        sys.exit(f"dashboard test: {len(failures)} check(s) failed")
    print("dashboard test passed")


if __name__ == "__main__":
    main()

"""Alert detection, judged (`make eval-detect`).

Real audio first (built, seeded, from the development split of training/realaudio.py: speakers,
clips and recording sessions the detector was never trained on):
R1. Real alert clips (ProtoSound sirens, smoke alarms, car horns and doorbells of the development
    split, a user's bedroom smoke alarm, the four whole alarm recordings) at -5, 0, +5 and +10 dB
    in real speech, noisy speech, babble, household sounds and music-like beds, through rooms.
R1b. The same short (1 s) clips repeated to 4 s with 50 ms gaps, as a siren or an alarm goes on
    sounding: a real alert lasting seconds, as most real recordings of one do.
R1c. The same clips (the short ones repeated) sounding from the first moment of 3 s recordings:
    a detector's first second, before its window has filled, as a short recording has it.
R2. Synthetic alerts from evaluation seeds in the same real backgrounds, for recall per class.
R2b. R2's sirens beginning 0.3-0.8 s into 3 s recordings just after a real car horn (both
    labelled): an ambulance in traffic, where an announced horn must not hide the siren.
R3. Over an hour of real alert-free audio of those kinds: false alarms per hour, every class.
R3b. Half an hour of it as 3 s recordings: 600 first seconds that must not fire either.
R4. Calibration: every 0.5 s window of R1-R3 through the shipped network (numpy), reliability
    and expected calibration error.
R5. Four real siren recordings from outside ../shared/data (Debian's free game packages, fetched
    by package_recordings.py), each 40 times in the same real backgrounds at -5…+10 dB: real
    sirens as a street holds them, which no choice here was tuned on.
R6. An hour of real music from two game soundtracks never trained on or tuned with
    (package_music.py), alone and under development speech: false alarms per hour, every class.
R6b. R5's recordings and the development split's real sirens and smoke alarms in that music,
    each 8 times at -5…+10 dB.
R7. Held-out alert-free material, at least 30 minutes of each kind, every class counted: tonal
    music from tonal_music.py's evaluation seeds (never trained on or tuned with), alone and
    under development speech; real urban sound (UrbanSound8K's evaluation recordings: engines,
    drilling, dogs, children, air conditioners, jackhammers, gun shots), alone and under speech;
    real speech (development speakers: read, in noise, babble); and UrbanSound8K's held-out
    street music (as much as there is), beside R6's hour of soundtracks.
R8. Real street sirens and car horns from UrbanSound8K's evaluation recordings (never trained
    on or tuned with), each slice twice at -5...+10 dB in real development backgrounds and once
    in R7's tonal music: recall per class and per recording, apart from any synthesis.
R9. Smoke alarms from their first beeps: the development split's real smoke alarms (ProtoSound,
    the bedroom alarm, the four whole recordings), repeated as an alarm goes on sounding, through
    rooms at 15-25 dB below real development speech: recall, and how many are announced within
    2 s of the first beep.
Then the synthetic evaluation as before:
1. Synthetic scenes from seeds and measured rooms and speech takes never used in training
   (`earshot synth scene --rooms evaluation`), alerts at -10...+20 dB SNR.
2. The real alarm recordings in ../shared/data/alarms mixed with real speech (Free Spoken
   Digit Dataset test takes) and real background recordings at -5, 0, +5 and +10 dB SNR.
3. At least an hour of alert-free scenes (speech, recorded noise, babble, traffic-like,
   machinery, music-like) for false alarms per hour.
Every file goes through `earshot detect --format jsonl`; a detected event matches a labelled
alert of its class when it falls inside the alert's span (plus 1 s for a room's tail); its
delay is its announcement time minus the alert's start.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np
import soundfile as sf
import soxr

from training import realaudio as ra
from training import package_music
from eval.detect import package_recordings
from training import tonal_music

RATE = 16_000
CLASSES = ["siren", "smoke_alarm", "car_horn", "doorbell"]
BANDS = [(-30, -20), (-20, -10), (-10, -5), (-5, 0), (0, 5), (5, 10), (10, 20.01)]


def run_scenes(earshot, folder, seeds, duration, per_minute, data):
    os.makedirs(folder, exist_ok=True)
    stems = []
    for seed in seeds:
        stem = os.path.join(folder, f"scene{seed}")
        if not os.path.exists(stem + ".json"):
            subprocess.run([earshot, "synth", "scene", "--seed", str(seed), "--duration", str(duration),
                            "--alerts-per-minute", str(per_minute), "--rooms", "evaluation", "--data", data,
                            "-o", stem + ".wav", "--alert-track", stem + ".alerts.wav", "--labels", stem + ".json.tmp"],
                           check=True, stderr=subprocess.DEVNULL)
            os.replace(stem + ".json.tmp", stem + ".json")
        stems.append(stem)
    return stems


def real_mixtures(folder, data, rng):
    """Each real alarm over real speech and noise at -5, 0, +5, +10 dB SNR."""
    os.makedirs(folder, exist_ok=True)
    alarms = sorted(glob.glob(os.path.join(data, "alarms", "*.wav")))
    noises = sorted(p for p in glob.glob(os.path.join(data, "noise", "*.wav")) if "white" not in p and "pink" not in p)
    speech = sorted(p for p in glob.glob(os.path.join(data, "speech", "fsdd", "*.wav")) if int(p[:-4].split("_")[-1]) < 5)
    if not alarms or not noises or not speech:
        print(f"no real recordings under {data}: skipping real alarms", file=sys.stderr)
        return []

    def load(path):
        x, rate = sf.read(path, dtype="float64", always_2d=True)
        return soxr.resample(x.mean(axis=1), rate, RATE)

    stems = []
    for a, alarm_path in enumerate(alarms):
        alarm = load(alarm_path)
        for snr in (-5, 0, 5, 10):
            for variant in range(2):
                stem = os.path.join(folder, f"{os.path.basename(alarm_path)[:-4]}_{snr:+d}dB_{variant}")
                stems.append(stem)
                if os.path.exists(stem + ".json"):
                    continue
                lead, tail = rng.uniform(3, 6), 4.0
                count = int((lead + tail) * RATE) + len(alarm)
                noise = load(noises[rng.integers(len(noises))])
                start = rng.integers(0, max(1, len(noise) - count))
                bed = np.resize(noise[start:], count) * 10 ** (rng.uniform(-45, -30) / 20) / (np.std(noise) + 1e-12)
                talk = np.zeros(count)
                t = int(rng.uniform(0, 1) * RATE)
                while t < count:
                    clip = load(speech[rng.integers(len(speech))])
                    talk[t:t + len(clip)] += clip[:count - t]
                    t += len(clip) + int(rng.uniform(0.2, 1.5) * RATE)
                talk *= np.std(bed) * 10 ** (rng.uniform(0, 12) / 20) / (np.std(talk) + 1e-12)
                background = bed + talk
                first = int(lead * RATE)
                s, e = ra.active_span(alarm)
                under = np.sqrt(np.mean(background[first + s:first + e] ** 2))
                over = np.sqrt(np.mean(alarm[s:e] ** 2))
                placed = alarm * under / over * 10 ** (snr / 20)
                mix = background.copy()
                mix[first:first + len(alarm)] += placed
                peak = np.abs(mix).max()
                if peak > 0.95:
                    mix *= 0.95 / peak
                sf.write(stem + ".wav", mix.astype(np.float32), RATE, subtype="FLOAT")
                json.dump([{"class": "smoke_alarm", "start": (first + s) / RATE, "end": (first + e) / RATE, "snr": snr,
                            "room": "recorded", "variant": os.path.basename(alarm_path), "description": "real recording"}],
                          open(stem + ".json", "w"))
    return stems


def detect(earshot, stem, options=()):
    started = time.perf_counter()
    out = subprocess.run([earshot, "detect", stem + ".wav", "--format", "jsonl", *options],
                         check=True, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    # Each event's class under the name the label files give it.
    events = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return [{"class": e["label"], "start": e["start"], "end": e["end"], "confidence": e["confidence"]} for e in events], elapsed


def match(labels, events):
    """Returns per label (matched event or None), and the events that matched nothing."""
    used = set()
    matched = []
    for label in labels:
        hit = None
        for i, event in enumerate(events):
            if i in used or event["class"] != label["class"]:
                continue
            if event["start"] <= label["end"] + 1.0 and event["end"] >= label["start"]:
                hit = i
                break
        if hit is not None:
            used.add(hit)
        matched.append(events[hit] if hit is not None else None)
    return matched, [e for i, e in enumerate(events) if i not in used]


def summarise(name, results):
    """results: list of (labels, events)."""
    tp = {c: 0 for c in CLASSES}
    fn = {c: 0 for c in CLASSES}
    fp = {c: 0 for c in CLASSES}
    band_hits = {b: [0, 0] for b in BANDS}
    delays, class_delays = [], {c: [] for c in CLASSES}
    for labels, events in results:
        matched, extra = match(labels, events)
        for label, event in zip(labels, matched):
            (tp if event else fn)[label["class"]] += 1
            for band in BANDS:
                if band[0] <= label["snr"] < band[1]:
                    band_hits[band][0] += 1 if event else 0
                    band_hits[band][1] += 1
            if event:
                delays.append(event["start"] - label["start"])
                class_delays[label["class"]].append(event["start"] - label["start"])
        for event in extra:
            fp[event["class"]] += 1
    print(f"\n{name}")
    print(f"  {'class':<12} {'precision':>9} {'recall':>7} {'F1':>6} {'alerts':>7} {'false':>6}")
    for c in CLASSES + ["all"]:
        t = sum(tp.values()) if c == "all" else tp[c]
        n = sum(fn.values()) if c == "all" else fn[c]
        f = sum(fp.values()) if c == "all" else fp[c]
        if t + n + f == 0:
            continue
        p = t / (t + f) if t + f else float("nan")
        r = t / (t + n) if t + n else float("nan")
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        print(f"  {c:<12} {p:>9.3f} {r:>7.3f} {f1:>6.3f} {t + n:>7d} {f:>6d}")
    print("  recall by SNR: " + ", ".join(f"{lo:+.0f}…{hi:+.0f} dB {h / n:.3f} ({n})" for (lo, hi), (h, n) in band_hits.items() if n))
    if delays:
        print(f"  detection delay: median {np.median(delays):.2f} s, 90th percentile {np.percentile(delays, 90):.2f} s")
        print("  delay by class (10th / median / 90th percentile, within 0.5 s): " + "; ".join(
            f"{c} {np.percentile(d, 10):.2f} / {np.median(d):.2f} / {np.percentile(d, 90):.2f} s, {np.mean(np.array(d) <= 0.5):.2f}"
            for c, d in class_delays.items() if d))
    return tp, fn, fp, delays


def recall_by_recording(results, names):
    """Recall per recording (the name of each result's first alert): which real recordings are
    found, and which are missed whatever the SNR."""
    found = {}
    for name, (labels, events) in zip(names, results):
        matched, _ = match(labels, events)
        found.setdefault(name, []).append(matched[0] is not None)
    print("  recall by recording: " + "; ".join(f"{name} {np.mean(hit):.3f}" for name, hit in found.items()))


def write_item(stem, mix, labels, track=None):
    """The mixture, its alert component alone (for the separation report) and its labels last."""
    sf.write(stem + ".wav", mix.astype(np.float32), RATE, subtype="FLOAT")
    if track is not None:
        sf.write(stem + ".alerts.wav", track.astype(np.float32), RATE, subtype="FLOAT")
    json.dump(labels, open(stem + ".json.tmp", "w"))
    os.replace(stem + ".json.tmp", stem + ".json")


def alert_label(klass, track, snr, kind, source):
    s, e = ra.active_span(track)
    return {"class": klass, "start": s / RATE, "end": e / RATE, "snr": snr, "background": kind, "source": source}


def alert_mixture(stem, seed, bank, alert, klass, snr, latest_start, source, music=None, kind=None, piece=None):
    """One alert at `snr` dB in 12 s of a real background (of `kind` where given, its music from
    `music` or `piece`), starting 3…`latest_start` s in."""
    if os.path.exists(stem + ".json"):
        return
    rng = np.random.default_rng(seed)
    n = 12 * RATE
    bed, kind = ra.background(rng, bank, n, music_bank=music, kind=kind, piece=piece)
    start = int(rng.uniform(3, latest_start) * RATE)
    mix, track = ra.place_alert(rng, bank, alert[:n - start], bed, snr, start)
    mix, track = ra.finish(rng, mix, track)
    write_item(stem, mix, [alert_label(klass, track, snr, kind, source)], track)


def opening_mixture(stem, seed, bank, alert, klass, snr):
    """One alert at `snr` dB in 3 s of a real background, sounding within its first 0.5 s."""
    if os.path.exists(stem + ".json"):
        return
    rng = np.random.default_rng(seed)
    n = 3 * RATE
    bed, kind = ra.background(rng, bank, n)
    start = int(rng.uniform(0, 0.5) * RATE)
    mix, track = ra.place_alert(rng, bank, alert[:n - start], bed, snr, start)
    mix, track = ra.finish(rng, mix, track)
    write_item(stem, mix, [alert_label(klass, track, snr, kind, "real clip at the start")], track)


def traffic_mixture(stem, seed, bank, siren, horn, snr):
    """3 s of a real background in which a real car horn sounds first (0–0.3 s, 0–10 dB) and a
    siren begins 0.3–0.8 s in, at `snr` dB: an ambulance in traffic."""
    if os.path.exists(stem + ".json"):
        return
    rng = np.random.default_rng(seed)
    n = 3 * RATE
    bed, kind = ra.background(rng, bank, n)
    horn_snr = round(float(rng.uniform(0, 10)), 1)
    mix, honk = ra.place_alert(rng, bank, horn[:int(0.8 * RATE)], bed, horn_snr, int(rng.uniform(0, 0.3) * RATE))
    start = int(rng.uniform(0.3, 0.8) * RATE)
    mix, track = ra.place_alert(rng, bank, siren[:n - start], mix, snr, start)
    mix, honk, track = ra.finish(rng, mix, honk, track)
    write_item(stem, mix, [alert_label("siren", track, snr, kind, "synthetic siren after a real horn"),
                           alert_label("car_horn", honk, horn_snr, kind, "real horn before a siren")], track + honk)


def quiet_item(stem, seed, bank, seconds, music=None, kind=None, piece=None):
    if os.path.exists(stem + ".json"):
        return
    item_rng = np.random.default_rng(seed)
    bed, kind = ra.background(item_rng, bank, int(seconds * RATE), music_bank=music, kind=kind, piece=piece)
    mix, = ra.finish(item_rng, bed)
    write_item(stem, mix, [])
    json.dump({"background": kind}, open(stem + ".kind.json", "w"))


def real_sets(folder, data, earshot, quiet_minutes):
    """R1 (real alert clips), R1b (the short ones repeated), R2 (synthetic alerts from evaluation
    seeds), R1c (real clips from a recording's start), R2b (R2's sirens after a real car horn),
    R3 (alert-free) and R3b (alert-free, short), all in real backgrounds of the development
    split; returns seven lists of stems."""
    bank = ra.Bank(data, "dev")
    if not bank:
        print(f"no real recordings under {data}: skipping the real-audio evaluation", file=sys.stderr)
        return [], [], [], [], [], [], []
    clips, looped, opening, synthetic, traffic, quiet, short_quiet = [], [], [], [], [], [], []
    for name in ("clips", "looped", "opening"):
        os.makedirs(os.path.join(folder, name), exist_ok=True)
    for klass in ra.ALERTS:
        for c, clip in enumerate(bank.alerts[klass]):
            short = len(clip) < 2 * RATE  # a whole recording already sounds for seconds
            for snr in (-5, 0, 5, 10):
                for variant in range(3):
                    name = f"{klass}{c}_{snr:+d}dB_{variant}"
                    clips.append(os.path.join(folder, "clips", name))
                    alert_mixture(clips[-1], [2027, len(clips)], bank, clip, klass, snr, 6, "real clip")
                    if short:
                        looped.append(os.path.join(folder, "looped", name))
                        alert_mixture(looped[-1], [2030, len(looped)], bank, ra.repeated(clip, 4 * RATE, 0.05),
                                      klass, snr, 6, "real clip repeated")
                    opening.append(os.path.join(folder, "opening", name))
                    opening_mixture(opening[-1], [2031, len(opening)], bank,
                                    ra.repeated(clip, 3 * RATE, 0.05) if short else clip, klass, snr)
    os.makedirs(os.path.join(folder, "synthetic"), exist_ok=True)
    alerts = ra.synthetic_alerts(earshot, os.path.join(folder, "synthetic", "alerts"), "eval", 30)
    for klass in ra.ALERTS:
        for i, alert in enumerate(alerts[klass]):
            snr = (-5, 0, 5, 10)[i % 4]
            stem = os.path.join(folder, "synthetic", f"{klass}{i}_{snr:+d}dB")
            synthetic.append(stem)
            alert_mixture(stem, [2028, len(synthetic)], bank, alert, klass, snr, 5, "synthetic")
    os.makedirs(os.path.join(folder, "traffic"), exist_ok=True)
    horns = bank.alerts["car_horn"]
    for i, siren in enumerate(alerts["siren"]):
        for variant in range(2):
            stem = os.path.join(folder, "traffic", f"siren{i}_{variant}")
            traffic.append(stem)
            traffic_mixture(stem, [2033, i, variant], bank, siren, horns[(2 * i + variant) % len(horns)],
                            (-5, 0, 5, 10)[(i + variant) % 4])
    os.makedirs(os.path.join(folder, "quiet"), exist_ok=True)
    for i in range(int(np.ceil(quiet_minutes))):
        quiet.append(os.path.join(folder, "quiet", f"quiet{i:03d}"))
        quiet_item(quiet[-1], [2029, i], bank, 60)
    os.makedirs(os.path.join(folder, "short-quiet"), exist_ok=True)
    for i in range(int(np.ceil(quiet_minutes * 10))):
        short_quiet.append(os.path.join(folder, "short-quiet", f"quiet{i:04d}"))
        quiet_item(short_quiet[-1], [2032, i], bank, 3)
    return clips, looped, opening, synthetic, traffic, quiet, short_quiet


def package_sirens(folder, data):
    """R5: each real package siren PLACEMENTS times, 3-5 s into 12 s of a real development
    background at -5…+10 dB; no stems (and a line saying why) where apt cannot fetch them."""
    bank = ra.Bank(data, "dev")
    try:
        paths = package_recordings.fetch()
    except SystemExit as error:
        print(f"skipping R5 (real package sirens): {error}", file=sys.stderr)
        return []
    os.makedirs(folder, exist_ok=True)
    stems = []
    for r, path in enumerate(paths):
        recording = ra.trim(ra.load(path))
        for i in range(package_recordings.PLACEMENTS):
            snr = package_recordings.SNRS[i % len(package_recordings.SNRS)]
            stems.append(os.path.join(folder, f"recording{r}_{i:02d}_{snr:+d}dB"))
            alert_mixture(stems[-1], [2034, r, i], bank, recording, "siren", snr, 5, package_recordings.RECORDINGS[r][0])
    return stems


def real_music_sets(folder, data, minutes):
    """R6 (alert-free) and R6b (real sirens and smoke alarms) in real music from two soundtracks
    never trained on or tuned with (package_music.py), alone or under development speech; no
    stems (and a line saying why) where apt cannot fetch them."""
    bank = ra.Bank(data, "dev")
    if not bank:
        return [], []
    try:
        paths = package_recordings.fetch()
        music = package_music.bank("eval", os.path.join(folder, "tracks"))
    except SystemExit as error:
        print(f"skipping R6 (real music): {error}", file=sys.stderr)
        return [], []
    quiet, alerts = [], []
    os.makedirs(os.path.join(folder, "quiet"), exist_ok=True)
    for i in range(int(np.ceil(minutes))):
        quiet.append(os.path.join(folder, "quiet", f"music{i:03d}"))
        quiet_item(quiet[-1], [2035, i], bank, 60, music, ra.MUSIC_KINDS[i % 2])
    os.makedirs(os.path.join(folder, "alerts"), exist_ok=True)
    recordings = [(ra.trim(ra.load(p)), "siren", name) for p, (name, _, _) in zip(paths, package_recordings.RECORDINGS)]
    recordings += [(clip, klass, "real clip") for klass in ("siren", "smoke_alarm") for clip in bank.alerts[klass]]
    for r, (recording, klass, source) in enumerate(recordings):
        for i, snr in enumerate((-5, 0, 5, 10) * 2):
            alerts.append(os.path.join(folder, "alerts", f"{klass}{r}_{i}_{snr:+d}dB"))
            alert_mixture(alerts[-1], [2036, r, i], bank, recording, klass, snr, 5, source, music, ra.MUSIC_KINDS[i % 2])
    return quiet, alerts


def tonal_piece(seed):
    """tonal_music.py's piece for an evaluation seed, as `ra.background` asks for one."""
    return lambda _, seconds: tonal_music.piece(np.random.default_rng([tonal_music.EVAL_SEEDS, *seed]), seconds)


def urban_item(stem, seed, bank, urban, pool, seconds, speech):
    """`seconds` of UrbanSound8K evaluation recordings from `pool`, under development speech
    where `speech`, through a room half the time."""
    if os.path.exists(stem + ".json"):
        return
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    bed = urban.bed(rng, n, pool)
    if speech:
        bed = bed * 10 ** (-rng.uniform(-5, 20) / 20) + ra.speech_track(rng, bank, n)
    if rng.random() < 0.5:
        bed = ra.through_room(rng, bank, bed)
    mix, = ra.finish(rng, bed)
    write_item(stem, mix, [])
    json.dump({"background": ("speech over " if speech else "") + os.path.basename(os.path.dirname(stem))},
              open(stem + ".kind.json", "w"))


def held_out_sets(folder, data, minutes):
    """R7 (alert-free: tonal music, urban sound, speech, street music) and R8 (UrbanSound8K's
    held-out sirens and horns); empty lists (and a line saying why) without UrbanSound8K."""
    bank = ra.Bank(data, "dev")
    urban = ra.UrbanBank(data, "eval")
    if not bank or not urban:
        print(f"no UrbanSound8K recordings under {data}: skipping R7 and R8", file=sys.stderr)
        return {}, []
    quiet = {name: [] for name in ("tonal music", "urban sound", "speech", "street music")}
    for name in quiet:
        os.makedirs(os.path.join(folder, name.replace(" ", "_")), exist_ok=True)
    for i in range(int(np.ceil(minutes))):
        stem = os.path.join(folder, "tonal_music", f"tonal{i:03d}")
        quiet["tonal music"].append(stem)
        quiet_item(stem, [2040, i], bank, 60, kind=("music", "music", "tv")[i % 3], piece=tonal_piece([i]))
        stem = os.path.join(folder, "urban_sound", f"urban{i:03d}")
        quiet["urban sound"].append(stem)
        urban_item(stem, [2041, i], bank, urban, urban.noise, 60, speech=i % 3 == 2)
        stem = os.path.join(folder, "speech", f"speech{i:03d}")
        quiet["speech"].append(stem)
        quiet_item(stem, [2042, i], bank, 60, kind=("speech", "noisy_speech", "babble")[i % 3])
    for i in range(int(np.ceil(len(urban.music) * 4 / 60)) * 2):  # each 4 s slice heard two to four times
        stem = os.path.join(folder, "street_music", f"music{i:03d}")
        quiet["street music"].append(stem)
        urban_item(stem, [2043, i], bank, urban, urban.music, 60, speech=i % 2 == 1)
    alerts = []
    os.makedirs(os.path.join(folder, "alerts"), exist_ok=True)
    for klass, pool in urban.alerts.items():
        for r, (recording, clip) in enumerate(pool):
            for i in range(3):  # twice in real backgrounds, then in tonal music
                snr = (-5, 0, 5, 10)[(r + i) % 4]
                stem = os.path.join(folder, "alerts", f"{klass}{r:03d}_{recording}_{i}_{snr:+d}dB")
                alerts.append(stem)
                alert_mixture(stem, [2044, ra.ALERTS.index(klass), r, i], bank, clip, klass, snr, 5, f"UrbanSound8K {recording}",
                              kind="music" if i == 2 else None, piece=tonal_piece([1, r]) if i == 2 else None)
    return quiet, alerts


def faint_alarm_set(folder, data):
    """R9: each development smoke alarm, repeated to 6 s where shorter, at -25, -20 and -15 dB
    under development speech (read, noisy, babble, over music), twice."""
    bank = ra.Bank(data, "dev")
    if not bank:
        return []
    os.makedirs(folder, exist_ok=True)
    stems = []
    for c, clip in enumerate(bank.alerts["smoke_alarm"]):
        sounding = ra.repeated(clip, 6 * RATE, 0.3) if len(clip) < 6 * RATE else clip
        for i, snr in enumerate((-25, -20, -15) * 2):
            stems.append(os.path.join(folder, f"smoke_alarm{c:02d}_{i}_{snr:+d}dB"))
            alert_mixture(stems[-1], [2045, c, i], bank, sounding, "smoke_alarm", snr, 5, "real smoke alarm under speech",
                          kind=("speech", "noisy_speech", "babble", "tv")[(c + i) % 4])
    return stems


def numpy_network(path):
    """The shipped detector's network in numpy (features.py feeds it), for calibration."""
    from safetensors.numpy import load_file
    from training.train import heard
    t = load_file(path)
    layers = sum(1 for k in t if k.startswith("conv") and k.endswith(".weight"))

    def forward(x):  # (batch, 2, frames, mels)
        for i in range(layers):
            w, b = t[f"conv{i}.weight"], t[f"conv{i}.bias"]
            p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
            h, wd = x.shape[2], x.shape[3]
            cols = np.stack([p[:, :, dy:dy + h, dx:dx + wd] for dy in range(3) for dx in range(3)], axis=2)
            x = np.maximum(0, np.einsum("bcktf,ock->botf", cols, w.reshape(w.shape[0], w.shape[1], 9)) + b[None, :, None, None])
            if i < layers - 1:
                h2, w2 = x.shape[2] // 2, x.shape[3] // 2
                x = x[:, :, :2 * h2, :2 * w2].reshape(x.shape[0], x.shape[1], h2, 2, w2, 2).max(axis=(3, 5))
        z = np.concatenate([x.max(axis=(2, 3)), x.mean(axis=(2, 3))], axis=1) @ t["head.weight"].T + t["head.bias"]
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return heard(z / z.sum(axis=1, keepdims=True))  # the music output, where it has one, as background
    return forward


def calibration(stems, weights):
    """Window-level reliability of the network's top probability on 0.5 s-spaced windows, each as
    long as the model says it hears (metadata `window`)."""
    from training import features as feat
    from safetensors import safe_open
    with safe_open(weights, "np") as f:
        feat.WINDOW = int(f.metadata().get("window", feat.WINDOW))
    heard = feat.WINDOW * feat.HOP / RATE
    forward = numpy_network(weights)
    confidence, correct = [], []
    for stem in stems:
        x, _ = sf.read(stem + ".wav", dtype="float64")
        labels = json.load(open(stem + ".json"))
        frames = feat.frame_features(x)
        inputs, targets = [], []
        for end in range(feat.WINDOW - 1, len(frames), 25):
            t1 = (end + 1) * feat.HOP / RATE
            recent = [l for l in labels if min(l["end"], t1) - max(l["start"], t1 - 0.5) >= 0.1]
            touched = [l for l in labels if l["start"] < t1 and l["end"] + 1.0 > t1 - heard]
            if recent:
                targets.append(feat.CLASSES.index(recent[0]["class"]))
            elif not touched:
                targets.append(0)
            else:
                continue
            inputs.append(feat.window_input(frames, end))
        if inputs:
            p = forward(np.stack(inputs).astype(np.float64))
            confidence.extend(p.max(axis=1))
            correct.extend(p.argmax(axis=1) == np.array(targets))
    confidence, correct = np.array(confidence), np.array(correct, dtype=float)
    edges = np.linspace(0, 1, 11)
    ece, rows = 0.0, []
    for lo, hi in zip(edges, edges[1:]):
        inside = (confidence > lo) & (confidence <= hi)
        if inside.any():
            ece += inside.mean() * abs(confidence[inside].mean() - correct[inside].mean())
            rows.append(f"{lo:.1f}–{hi:.1f}: {confidence[inside].mean():.3f} vs {correct[inside].mean():.3f} ({inside.sum()})")
    print(f"\nCalibration on {len(confidence)} development windows (top probability vs accuracy): "
          f"expected calibration error {ece:.4f}")
    print("  reliability: " + "; ".join(rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--earshot", default=".build/release/earshot")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="eval/data/detect")
    parser.add_argument("--weights", default="Sources/EarshotAlerts/Resources/AlertDetector.safetensors",
                        help="the network `--earshot` ships, for the calibration table")
    parser.add_argument("--scenes", type=int, default=20, help="120 s evaluation scenes")
    parser.add_argument("--quiet-minutes", type=float, default=60, help="alert-free audio, minutes")
    parser.add_argument("--held-out-minutes", type=float, default=30, help="R7: minutes of each held-out kind")
    parser.add_argument("--real-only", action="store_true", help="skip the synthetic evaluation")
    parser.add_argument("--held-out-only", action="store_true", help="R7, R8 and R9 alone")
    parser.add_argument("--detect-option", action="append", default=[],
                        help="passed to `earshot detect` (repeat), e.g. --detect-option=--sensitivity=siren=0.5")
    args = parser.parse_args()
    rng = np.random.default_rng(2026)

    print("Preparing evaluation audio (cached in eval/data/detect)…", file=sys.stderr)
    clips = []
    if not args.held_out_only:
        clips, looped, opening, synthetic, traffic, real_quiet, short_quiet = real_sets(
            os.path.join(args.out, "realaudio"), args.data, args.earshot, args.quiet_minutes)
    if not args.real_only and not args.held_out_only:
        scenes = run_scenes(args.earshot, os.path.join(args.out, "scenes"), range(900_000, 900_000 + args.scenes), 120, 8, args.data)
        quiet = run_scenes(args.earshot, os.path.join(args.out, "quiet"),
                           range(950_000, 950_000 + int(np.ceil(args.quiet_minutes / 5))), 300, 0, args.data)
        real = real_mixtures(os.path.join(args.out, "real"), args.data, rng)

    seconds, busy = 0.0, 0.0

    def run_all(stems):
        nonlocal seconds, busy
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            found = list(pool.map(lambda stem: detect(args.earshot, stem, args.detect_option), stems))
        out = []
        for stem, (events, elapsed) in zip(stems, found):
            seconds += sf.info(stem + ".wav").duration
            busy += elapsed
            out.append((json.load(open(stem + ".json")), events))
        return out

    def false_alarms(name, stems):
        results = run_all(stems)
        count = sum(len(events) for _, events in results)
        hours = sum(sf.info(s + ".wav").duration for s in stems) / 3600
        classes, backgrounds = {}, {}
        for stem, (_, events) in zip(stems, results):
            kind_file = stem + ".kind.json"
            kind = json.load(open(kind_file))["background"] if os.path.exists(kind_file) else "scene"
            backgrounds.setdefault(kind, [0, 0.0])
            backgrounds[kind][0] += len(events)
            backgrounds[kind][1] += sf.info(stem + ".wav").duration / 3600
            for e in events:
                classes[e["class"]] = classes.get(e["class"], 0) + 1
        print(f"\n{name}: {hours:.2f} h, {count} false alarm(s) = {count / hours:.2f} per hour, any class {classes or ''}")
        if len(backgrounds) > 1:
            print("  per background: " + ", ".join(f"{k} {n / h:.1f}/h ({h * 60:.0f} min)" for k, (n, h) in sorted(backgrounds.items())))

    def held_out():
        quiet, alerts = held_out_sets(os.path.join(args.out, "realaudio", "held-out"), args.data, args.held_out_minutes)
        for name, stems in quiet.items():
            false_alarms(f"R7. Held-out {name}", stems)
        if alerts:
            results = run_all(alerts)
            for klass in ("siren", "car_horn"):
                mine = [r for r in results if r[0][0]["class"] == klass]
                summarise(f"R8. UrbanSound8K's held-out {klass.replace('_', ' ')} recordings, -5…+10 dB, a third of "
                          f"them in tonal music ({len(mine)} mixtures)", mine)
                recall_by_recording(mine, [labels[0]["source"] for labels, _ in mine])
            summarise("R8, the placements in tonal music", [r for r, stem in zip(results, alerts) if "_2_" in os.path.basename(stem)])
        faint = faint_alarm_set(os.path.join(args.out, "realaudio", "faint-alarms"), args.data)
        if faint:
            results = run_all(faint)
            summarise(f"R9. Real smoke alarms 15–25 dB under speech, through rooms ({len(faint)} mixtures)", results)
            delays = [m[0]["start"] - labels[0]["start"] if m[0] else np.inf for labels, events in results
                      for m in [match(labels, events)[0]]]
            print(f"  announced within 2 s of the first beep: {np.mean(np.array(delays) <= 2):.3f}")

    if args.held_out_only:
        held_out()
        return
    if clips:
        results = run_all(clips)
        summarise(f"R1. Real alert clips (development split) in real backgrounds, -5…+10 dB ({len(clips)} mixtures)", results)
        recall_by_recording(results, [os.path.basename(stem).rsplit("_", 2)[0] for stem in clips])  # siren0_+5dB_2: siren0
        summarise(f"R1b. The short real clips repeated to 4 s, -5…+10 dB ({len(looped)} mixtures)", run_all(looped))
        summarise(f"R1c. The real clips from the first moment of 3 s recordings, -5…+10 dB ({len(opening)} mixtures)",
                  run_all(opening))
        summarise(f"R2. Synthetic alerts (evaluation seeds) in real backgrounds, -5…+10 dB ({len(synthetic)} mixtures)", run_all(synthetic))
        summarise(f"R2b. R2's sirens after a real car horn in 3 s recordings, -5…+10 dB ({len(traffic)} mixtures)",
                  run_all(traffic))
        false_alarms("R3. Real alert-free audio (development speakers and clips)", real_quiet)
        false_alarms(f"R3b. The same kinds as {len(short_quiet)} recordings of 3 s", short_quiet)
        calibration(clips + synthetic + real_quiet[:20], args.weights)
        sirens = package_sirens(os.path.join(args.out, "realaudio", "package_sirens"), args.data)
        if sirens:
            results = run_all(sirens)
            summarise(f"R5. Real package sirens (outside ../shared/data) in real backgrounds, -5…+10 dB ({len(sirens)} mixtures)",
                      results)
            recall_by_recording(results, [labels[0]["source"] for labels, _ in results])
        music_quiet, music_alerts = real_music_sets(os.path.join(args.out, "realaudio", "music"), args.data, args.quiet_minutes)
        if music_quiet:
            false_alarms("R6. Real music never trained on (two game soundtracks), alone and under development speech", music_quiet)
            summarise(f"R6b. Real sirens (R5's recordings, the development clips) and real smoke alarms in that music, "
                      f"-5…+10 dB ({len(music_alerts)} mixtures)", run_all(music_alerts))
        held_out()
    if args.real_only:
        print(f"\n`earshot detect` real-time factor (whole process, file reading included): {busy / seconds:.4f}")
        return

    summarise(f"Synthetic scenes, unseen seeds and rooms ({len(scenes)} × 120 s)", run_all(scenes))
    if real:
        summarise(f"Real alarm recordings over FSDD speech and noise, -5…+10 dB ({len(real)} mixtures)", run_all(real))
    false_alarms("Synthetic alert-free scenes", quiet)
    print(f"\n`earshot detect` real-time factor (whole process, file reading included): {busy / seconds:.4f}")

    # The whole listen chain (detection + separation + enhancement), on the first scenes.
    for rate in (16_000, 48_000):
        source = scenes[0] + ".wav"
        if rate != RATE:
            x, _ = sf.read(source, dtype="float64")
            source = os.path.join(args.out, f"rtf_{rate}.wav")
            sf.write(source, soxr.resample(x, RATE, rate).astype(np.float32), rate, subtype="FLOAT")
        target = os.path.join(args.out, "listen_out.wav")
        started = time.perf_counter()
        subprocess.run([args.earshot, "listen", source, "-o", target], check=True, capture_output=True)
        elapsed = time.perf_counter() - started
        print(f"`earshot listen` (detector → suppressor with separation → guard) at {rate // 1000} kHz: "
              f"real-time factor {elapsed / sf.info(source).duration:.4f}")


if __name__ == "__main__":
    main()

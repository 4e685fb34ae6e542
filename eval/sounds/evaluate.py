#!/usr/bin/env python3
"""Your own sounds found when they sound again: each sound enrolled from one take, looked for as
its other takes (`rerecordings.py`: real re-recordings, and sound files re-recorded through a
loudspeaker, rooms and microphones), in 12 s scenes at 0, 5, 10, 15 and 20 dB over real
backgrounds: LibriSpeech speech, household noise, UrbanSound8K urban sound and street music (its
evaluation recordings), and seeded tonal music (`training/tonal_music.py`, evaluation seeds). Every
scene also holds a distractor: a take of another sound of the set. `--development` is the part
settings are chosen on: the tune sounds over other recordings and seeds, no household sound
(`Backgrounds`).

Then target-free audio with every sound enrolled at once: the same kinds of background, with real
sounds that are none of them (ProtoSound's library clips, Donate-a-Cry's cries, UrbanSound8K's
dogs, children and gun shots) as distractors.

Reported per method: recall per SNR (the sound announced between its onset and 3 s after), at
10 dB and above, distractors reported as the sound, false alarms an hour, median delay; then
recall per sound, the sounds split into `tune` and `held-out` by source. Refused enrollments are
listed and count as misses.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import wave
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from eval.sounds import rerecordings as rr
from training import realaudio as ra
from training import tonal_music

RATE = ra.RATE
SNRS = (0, 5, 10, 15, 20)
SCENE = 12.0
ONSET, DISTRACTOR = 2.0, 7.5
BEDS = ("speech", "household", "urban", "street music", "tonal music")


def save(path, x):
    x = np.clip(x, -1, 1)
    with wave.open(path, "wb") as out:
        out.setnchannels(1); out.setsampwidth(2); out.setframerate(RATE)
        out.writeframes((x * 32767).astype("<i2").tobytes())


class Backgrounds:
    """The backgrounds of one part, none of them what the matchers' bank is made of
    (`training/train_sounds.py`: UrbanSound8K's training recordings, the odd LibriSpeech files,
    tonal music of training seeds). `evaluation`: a quarter of LibriSpeech, UrbanSound8K's
    evaluation recordings, tonal music of evaluation seeds and the household recordings, which
    neither the bank nor the development part hears. `development`, what settings are chosen
    on: another quarter of LibriSpeech, UrbanSound8K's development recordings, tonal music of
    development seeds, and no household sound."""

    def __init__(self, data, rng, part="evaluation"):
        self.rng = rng
        self.part = part
        development = part == "development"
        self.kinds = BEDS if not development else tuple(k for k in BEDS if k != "household")
        self.speech = [ra.load(p) for p in sorted(glob.glob(f"{data}/speech/librispeech/*.flac"))[2 if development else 0::4]]
        self.household = [ra.load(p) for p in sorted(glob.glob(f"{data}/noise/*.wav")) if "white" not in p and "pink" not in p]
        split = "dev" if development else "eval"
        urban = [p for p in sorted(glob.glob(f"{data}/noise/urbansound8k/*/*.flac")) if ra.urban_split(p) == split]
        self.urban = [ra.load(p) for p in urban if "street_music" not in p and "gun_shot" not in p]
        self.street = [ra.load(p) for p in urban if "street_music" in p]
        self.pieces = 0

    def strangers(self, data):
        """Real sounds that are none of the enrolled ones, this part's share of them:
        ProtoSound's library clips (its doorbells and appliances are enrolled sounds here),
        Donate-a-Cry's cries, UrbanSound8K's dogs, children and gun shots."""
        first = 1 if self.part == "development" else 0
        proto = [p for p in sorted(glob.glob(f"{data}/sounds/protosound/*/*_lib_*.wav")) if "/doorbell/" not in p and "/appliances/" not in p]
        paths = proto[first::2] + sorted(glob.glob(f"{data}/sounds/donateacry/*.wav"))[5 * first::10]
        split = "dev" if self.part == "development" else "eval"
        paths += [p for kind in ("dog_bark", "children_playing", "gun_shot")
                  for p in sorted(glob.glob(f"{data}/noise/urbansound8k/{kind}/*.flac"))[::2] if ra.urban_split(p) == split]
        return [ra.load(p) for p in paths]

    def bed(self, kind, seconds):
        n = int(seconds * RATE)
        rng = self.rng
        if kind == "tonal music":
            self.pieces += 1
            seeds = tonal_music.DEV_SEEDS if self.part == "development" else tonal_music.EVAL_SEEDS
            x = tonal_music.piece(np.random.default_rng(seeds + 590_000 + self.pieces), seconds)
        elif kind == "household":
            z = self.household[rng.integers(len(self.household))]
            start = rng.integers(max(1, len(z) - n))
            x = np.resize(z[start:], n)
        else:
            bank = {"speech": self.speech, "urban": self.urban, "street music": self.street}[kind]
            parts, total = [], 0
            while total < n:
                part = bank[rng.integers(len(bank))]
                parts.append(part); total += len(part)
            x = np.concatenate(parts)[:n]
        return x / (np.sqrt(np.mean(x ** 2)) + 1e-12) * 10 ** (rng.uniform(-40, -25) / 20)


def place(scene, x, at):
    start = int(at * RATE)
    scene[start:start + len(x)] += x[: len(scene) - start]


def enroll(earshot, name, clip, store, work):
    path = f"{work}/{name}.wav"
    save(path, clip / max(1e-9, np.abs(clip).max()) * 0.5)
    result = subprocess.run([earshot, "sounds", "enroll", name, path, "--data", store], capture_output=True, text=True)
    return None if result.returncode == 0 else result.stderr.strip().splitlines()[-1]


def detect(earshot, store, path, method):
    out = subprocess.run([earshot, "sounds", "detect", path, "--data", store, "--format", "jsonl", "--method", method],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--earshot", default=".build/release/earshot")
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--out", default="eval/data/sounds")
    p.add_argument("--methods", default="combined,embedding,template,landmarks,peaks")
    p.add_argument("--quiet-minutes", type=float, default=60)
    p.add_argument("--only", default=None, help="sounds whose names hold this text (quicker runs)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--development", action="store_true",
                   help="the tune sounds in the development backgrounds: what settings are chosen on")
    a = p.parse_args()
    if not os.path.isdir(f"{a.data}/sounds/protosound"):
        sys.exit(f"eval-sounds: {a.data}/sounds/protosound is missing: the shared recordings are needed")
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="earshot-sounds-", dir=a.out)
    try:
        evaluate(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def evaluate(a, work):
    rng = np.random.default_rng(a.seed)
    methods = a.methods.split(",")
    sounds = rr.sounds(a.data, earshot=a.earshot, work=work)
    if a.only:
        sounds = {n: s for n, s in sounds.items() if a.only in n}
    if a.development:
        sounds = {n: s for n, s in sounds.items() if s["group"] == "tune"}
    beds = Backgrounds(a.data, rng, "development" if a.development else "evaluation")
    names = list(sounds)

    everything, refused = f"{work}/all", {}
    for name in names:
        refused[name] = enroll(a.earshot, name, sounds[name]["takes"][0], f"{work}/store_{name}", work)
        if refused[name] is None:
            enroll(a.earshot, name, sounds[name]["takes"][0], everything, work)

    # One long recording per sound: its scenes back to back.
    plans = {}
    for i, name in enumerate(names):
        scenes, plan = [], []
        others = [n for n in names if sounds[n]["kind"] != sounds[name]["kind"]] or [n for n in names if n != name]
        for t, take in enumerate(sounds[name]["takes"][1:]):
            for snr in SNRS:
                kind = beds.kinds[(t * len(SNRS) + snr // 5 + i) % len(beds.kinds)]
                scene = beds.bed(kind, SCENE)
                level = ra.loud_half_rms(scene)
                place(scene, take / (ra.loud_half_rms(take) + 1e-12) * level * 10 ** (snr / 20), ONSET)
                other = sounds[others[rng.integers(len(others))]]["takes"]
                distractor = other[rng.integers(len(other))]
                place(scene, distractor / (ra.loud_half_rms(distractor) + 1e-12) * level * 10 ** (rng.uniform(0, 15) / 20), DISTRACTOR)
                offset = len(scenes) * SCENE
                scenes.append(scene)
                plan.append((offset, snr, kind))
        path = f"{work}/scenes_{name}.wav"
        save(path, np.concatenate(scenes))
        plans[name] = (path, plan)

    # Target-free audio: backgrounds with sounds that are none of the enrolled ones.
    strangers = beds.strangers(a.data)
    quiet, minutes = f"{work}/quiet.wav", 0
    with wave.open(quiet, "wb") as out:
        out.setnchannels(1); out.setsampwidth(2); out.setframerate(RATE)
        while minutes < a.quiet_minutes:
            bed = beds.bed(beds.kinds[minutes % len(beds.kinds)], 60)
            level = ra.loud_half_rms(bed)
            for _ in range(4):
                s = strangers[rng.integers(len(strangers))]
                place(bed, s / (ra.loud_half_rms(s) + 1e-12) * level * 10 ** (rng.uniform(0, 15) / 20), rng.uniform(0, 58))
            out.writeframes((np.clip(bed, -1, 1) * 32767).astype("<i2").tobytes())
            minutes += 1

    results = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for method in methods:
            jobs = {name: pool.submit(detect, a.earshot, f"{work}/store_{name}", plans[name][0], method)
                    for name in names if refused[name] is None}
            false_alarms = pool.submit(detect, a.earshot, everything, quiet, method) if os.path.isdir(everything) else None
            per_sound = {}
            for name in names:
                found = [d for d in jobs[name].result() if d["label"] == name] if name in jobs else []
                rows = []
                for offset, snr, kind in plans[name][1]:
                    hit = [d["start"] - offset - ONSET for d in found if offset + ONSET <= d["start"] <= offset + ONSET + 3]
                    wrong = any(offset + DISTRACTOR <= d["start"] <= offset + DISTRACTOR + 3 for d in found)
                    rows.append({"snr": snr, "bed": kind, "hit": bool(hit), "delay": hit[0] if hit else None, "distractor": wrong})
                per_sound[name] = rows
            quiet_found = false_alarms.result() if false_alarms else []
            for name in names:
                per_sound[name + " false"] = sum(d["label"] == name for d in quiet_found)
            by_bed = {b: sum(beds.kinds[int(d["start"] // 60) % len(beds.kinds)] == b for d in quiet_found) for b in beds.kinds}
            results[method] = (per_sound, len(quiet_found), by_bed)
    report(a, sounds, refused, results, minutes, beds.kinds)


def report(a, sounds, refused, results, minutes, kinds):
    names = list(sounds)
    print(f"\nYour own sounds: {len(names)} sounds, each enrolled from one take and looked for as its "
          f"{sum(len(s['takes']) - 1 for s in sounds.values())} other takes at {', '.join(map(str, SNRS))} dB; "
          f"{minutes} min of target-free audio")
    for name, why in refused.items():
        if why:
            print(f"  refused: {name}: {why}")
    for group in ("all", "tune", "held-out"):
        chosen = [n for n in names if group == "all" or sounds[n]["group"] == group]
        if not chosen or (group != "all" and len(chosen) == len(names)):
            continue
        print(f"\n{group} ({len(chosen)} sounds)\n")
        print("| method | " + " | ".join(f"{snr} dB" for snr in SNRS) + " | recall 0–20 dB | ≥ 10 dB | distractors reported | false alarms / h | median delay |")
        print("| --- " * 11 + "|")
        for method, (per_sound, false_alarms, _) in results.items():
            rows = [r for n in chosen for r in per_sound[n]]
            per = [np.mean([r["hit"] for r in rows if r["snr"] == snr]) for snr in SNRS]
            loud = np.mean([r["hit"] for r in rows if r["snr"] >= 10])
            delays = [r["delay"] for r in rows if r["hit"]]
            fa = f"{false_alarms / minutes * 60:.1f}" if group == "all" else ""
            print(f"| {method} | " + " | ".join(f"{v:.2f}" for v in per) + f" | {np.mean([r['hit'] for r in rows]):.2f} | {loud:.2f} | "
                  f"{np.mean([r['distractor'] for r in rows]):.1%} | {fa} | {np.median(delays) if delays else float('nan'):.2f} s |")
    print("\nper sound: recall 0–20 dB / false alarms an hour with every sound enrolled (" + ", ".join(results) + ")\n")
    print("| sound | group | source | takes | " + " | ".join(results) + " |")
    print("| --- " * (4 + len(results)) + "|")
    for name in names:
        s = sounds[name]
        cells = [f"{np.mean([r['hit'] for r in per[name]]):.2f} / {per[name + ' false'] / minutes * 60:.0f}" if per[name] else "refused"
                 for per, _, _ in results.values()]
        print(f"| {name} | {s['group']} | {'real takes' if s['real'] else 're-recorded file'} | {len(s['takes'])} | " + " | ".join(cells) + " |")
    print("\nper background: recall 0–20 dB / false alarms an hour\n")
    print("| method | " + " | ".join(kinds) + " |")
    print("| --- " * (1 + len(kinds)) + "|")
    for method, (per_sound, _, by_bed) in results.items():
        rows = [r for n in names for r in per_sound[n]]
        hours = minutes / 60 / len(kinds)
        print(f"| {method} | " + " | ".join(f"{np.mean([r['hit'] for r in rows if r['bed'] == b]):.2f} / {by_bed[b] / hours:.0f}" for b in kinds) + " |")


if __name__ == "__main__":
    main()

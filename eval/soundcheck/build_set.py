"""A labelled set for the sound check: real read speech with faults of known size.

Speech is LibriSpeech, one utterance per item, from the speakers of one split of
training/realaudio.py: `--split train` makes the tuning set (thresholds and the RT60 line were set
on it), `--split dev` the evaluation set, whose 69 speakers the tuning never saw. Every item gets a
faint real room tone (a recorded background 40–55 dB under the speech) and a speech level between
−30 and −16 dBFS; 30 % stay that way (a tenth of those in a real, measured small room), the rest
get one or two faults of known size (peaks are kept under −1 dBFS unless the fault is the level):

  too-quiet     speech at −55…−42 dBFS            too-loud   peaks at −0.25…−0.02 dBFS, unclipped
  clipping      hard (0.3–5 % of samples cut) or soft (tanh saturation), then gain to −6…−0.5 dBFS peak
  noisy         a real recording (dishes, tap, bike, cat, pink/white noise) at 0–12 dB SNR
  hum           50 or 60 Hz and 1–5 harmonics, 8–22 dB under the speech
  narrowband    a channel low-passed at 2.8–4.5 kHz (eighth-order Butterworth, or resampled to 8 kHz)
  muffled       a covered microphone: 15–30 dB less above 1.5–3 kHz
  reverberant   a room of RT60 0.8–1.8 s (exponentially decaying noise, direct path 0 to −8 dB DRR)
  dc-offset     a constant 0.015–0.1
  dropouts      2–6 gaps of 5–120 ms of digital silence inside the speech
  echo          a copy 80–400 ms late, 3–12 dB down

Fault sizes lie beyond what clean LibriSpeech itself shows: some of its recordings carry noise
15 dB under the speech, or mains hum 25–35 dB under it, and are clean by any label.
SNR is active speech level (P.56 style, as the checker reports it) against the mean noise power;
RT60 is the room response's own (Schroeder, −5 to −35 dB). Seeded; one WAV per item and items.json.

    .venv/bin/python eval/soundcheck/build_set.py --data ../shared/data --split dev --out eval/data/soundcheck/dev
"""
import argparse
import json
import os
import sys

import numpy as np
import scipy.signal
import soundfile as sf
import soxr

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "training"))
import realaudio  # noqa: E402

RATE = realaudio.RATE
KINDS = ["too-quiet", "too-loud", "clipping", "noisy", "hum", "narrowband", "muffled", "reverberant",
         "dc-offset", "dropouts", "echo"]
# Pairs that cannot both be true of one recording, or that would hide each other.
CLASH = {frozenset(p) for p in [("too-quiet", "too-loud"), ("too-quiet", "clipping"), ("too-loud", "clipping"),
                                  ("narrowband", "muffled"), ("noisy", "too-quiet"), ("too-loud", "dc-offset"),
                                  ("clipping", "dc-offset"), ("reverberant", "echo"), ("too-loud", "hum")]}


def active_power(x):
    """P.56-style active level: mean power of 10 ms frames within 15.9 dB of that mean."""
    frames = x[: len(x) // 160 * 160].reshape(-1, 160)
    p = (frames ** 2).mean(axis=1)
    level = p.mean()
    for _ in range(20):
        active = p > level * 10 ** (-15.9 / 10)
        level = p[active].mean()
    return level


def set_level(x, dbfs):
    return x * np.sqrt(10 ** (dbfs / 10) / active_power(x))


def headroom(x, peak_dbfs=-1.0):
    """Lowered where needed so that peaks stay under `peak_dbfs`: nothing clips by accident."""
    ceiling = 10 ** (peak_dbfs / 20)
    peak = np.abs(x).max()
    return x * (ceiling / peak) if peak > ceiling else x


def schroeder_rt60(h):
    edc = np.cumsum(h[::-1] ** 2)[::-1]
    edc_db = 10 * np.log10(edc / edc[0] + 1e-30)
    t = np.arange(len(h)) / RATE
    i5, i35 = np.argmax(edc_db <= -5), np.argmax(edc_db <= -35)
    slope = np.polyfit(t[i5:i35], edc_db[i5:i35], 1)[0]
    return -60 / slope


def room(rng, rt60):
    """Exponentially decaying noise after a direct path; the decay is a little slower at low frequencies."""
    n = int(RATE * rt60 * 1.2)
    t = np.arange(n) / RATE
    tail = rng.standard_normal(n) * np.exp(-6.91 * t / rt60)
    tail[: int(0.003 * RATE)] = 0
    h = tail / np.sqrt(np.sum(tail ** 2))
    drr = rng.uniform(-8, 0)
    h[0] += 10 ** (drr / 20)
    return h


def shelf(x, corner, loss_db, rng):
    """A covered microphone: full level below `corner`, `loss_db` less an octave above it."""
    freqs = np.linspace(0, RATE / 2, 513)
    octaves = np.clip(np.log2(np.maximum(freqs, 1) / corner), 0, 1)
    gains = 10 ** (-loss_db * octaves / 20)
    fir = scipy.signal.firwin2(511, freqs, gains, fs=RATE)
    return scipy.signal.fftconvolve(x, fir)[255: 255 + len(x)]


def apply(kind, x, rng, truth, bank, speech_db):
    if kind == "reverberant":
        rt60 = rng.uniform(0.8, 1.8)
        h = room(rng, rt60)
        truth["rt60"] = float(schroeder_rt60(h))
        return scipy.signal.fftconvolve(x, h)[: len(x)]
    if kind == "echo":
        delay, gain = rng.uniform(0.08, 0.4), -rng.uniform(3, 12)
        d = int(delay * RATE)
        y = x.copy()
        y[d:] += 10 ** (gain / 20) * x[:-d]
        truth["echoDelay"], truth["echoDB"] = delay, gain
        return y
    if kind == "noisy":
        snr = rng.uniform(0, 12)
        noise = realaudio.segment(rng, bank.noise[rng.integers(len(bank.noise))], len(x))
        noise = noise * np.sqrt(active_power(x) / np.mean(noise ** 2) * 10 ** (-snr / 10))
        truth["snr"] = snr
        return x + noise
    if kind == "muffled":
        loss = rng.uniform(15, 30)
        truth["muffleDB"] = loss
        return shelf(x, rng.uniform(1500, 3000), loss, rng)
    if kind == "narrowband":
        if rng.random() < 0.4:
            truth["bandwidth"] = 4000.0
            return soxr.resample(soxr.resample(x, RATE, 8000), 8000, RATE)[: len(x)]
        cutoff = rng.uniform(2800, 4500)
        truth["bandwidth"] = cutoff
        sos = scipy.signal.butter(8, cutoff, fs=RATE, output="sos")
        return scipy.signal.sosfilt(sos, x)
    if kind == "hum":
        f0 = 50.0 if rng.random() < 0.5 else 60.0
        below = rng.uniform(8, 22)
        t = np.arange(len(x)) / RATE
        harmonics = int(rng.integers(2, 7))
        hum = sum(rng.uniform(0.3, 1) / h * np.sin(2 * np.pi * (f0 + rng.uniform(-0.2, 0.2)) * h * t + rng.uniform(0, 6.3))
                  for h in range(1, harmonics + 1))
        hum *= np.sqrt(active_power(x) * 10 ** (-below / 10) / np.mean(hum ** 2))
        truth["hum"], truth["humBelowDB"] = f0, below
        return x + hum
    if kind == "too-quiet":
        return set_level(x, rng.uniform(-55, -42))
    if kind == "too-loud":
        return x / np.abs(x).max() * 10 ** (-rng.uniform(0.02, 0.25) / 20)
    if kind == "clipping":
        if rng.random() < 0.5:
            share = rng.uniform(0.003, 0.05)
            ceiling = np.quantile(np.abs(x), 1 - share)
            y = np.clip(x, -ceiling, ceiling)
        else:
            drive = rng.uniform(4, 12)
            y = np.tanh(drive * x / np.abs(x).max())
        return y / np.abs(y).max() * 10 ** (-rng.uniform(0.5, 6) / 20)
    if kind == "dc-offset":
        dc = rng.uniform(0.015, 0.1) * (1 if rng.random() < 0.5 else -1)
        truth["dc"] = dc
        return x + dc
    if kind == "dropouts":
        y = x.copy()
        frames = (y[: len(y) // 160 * 160].reshape(-1, 160) ** 2).mean(axis=1)
        loud = np.nonzero(frames > np.median(frames))[0]
        count = int(rng.integers(2, 7))
        for start in rng.choice(loud, size=min(count, len(loud)), replace=False):
            length = int(rng.uniform(0.005, 0.12) * RATE)
            y[start * 160: start * 160 + length] = 0
        truth["dropouts"] = count
        return y
    raise ValueError(kind)


ORDER = ["reverberant", "echo", "noisy", "muffled", "narrowband", "hum", "too-quiet", "too-loud", "clipping",
         "dc-offset", "dropouts"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--split", choices=["train", "dev"], required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--items", type=int, default=440)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    bank = realaudio.Bank(args.data, args.split)
    if not bank:
        sys.exit(f"no LibriSpeech speech or noise under {args.data}: the sound-check set needs ../shared/data")
    rng = np.random.default_rng(args.seed if args.seed is not None else (11 if args.split == "train" else 2027))
    os.makedirs(args.out, exist_ok=True)
    rooms = [h for h in bank.rooms]
    items = []
    for i in range(args.items):
        speaker = int(rng.integers(len(bank.speech)))
        x = bank.speech[speaker]
        if len(x) > 12 * RATE:
            start = int(rng.integers(0, len(x) - 12 * RATE))
            x = x[start: start + 12 * RATE]
        speech_db = rng.uniform(-30, -16)
        x = set_level(x - x.mean(), speech_db)
        truth = {}
        if rng.random() < 0.3:
            faults = []
            if rooms and rng.random() < 0.1:
                h = rooms[int(rng.integers(len(rooms)))]
                truth["rt60"] = float(schroeder_rt60(h))
                x = set_level(scipy.signal.fftconvolve(x, h)[: len(x)], speech_db)
        else:
            faults = [KINDS[int(rng.integers(len(KINDS)))]]
            if rng.random() < 0.4:
                second = [k for k in KINDS if k != faults[0] and frozenset((k, faults[0])) not in CLASH]
                faults.append(second[int(rng.integers(len(second)))])
        # Faint real room tone under everything.
        tone = realaudio.segment(rng, bank.noise[int(rng.integers(len(bank.noise)))], len(x))
        tone *= np.sqrt(active_power(x) * 10 ** (-rng.uniform(40, 55) / 10) / np.mean(tone ** 2))
        x = x + tone
        for kind in sorted(faults, key=ORDER.index):
            if kind in ("too-loud", "clipping", "dc-offset", "dropouts") and not {"too-loud", "clipping"} & set(truth.get("applied", [])):
                x = headroom(x)
            truth.setdefault("applied", []).append(kind)
            x = apply(kind, x, rng, truth, bank, speech_db)
        x = headroom(x) if not {"too-loud", "clipping"} & set(faults) else x
        truth.pop("applied", None)
        name = f"{i:04d}.wav"
        sf.write(os.path.join(args.out, name), x.astype(np.float32), RATE, subtype="FLOAT")
        items.append({"file": name, "problems": sorted(faults), "truth": truth, "speaker": bank.speakers[speaker]})
    with open(os.path.join(args.out, "items.json"), "w") as f:
        json.dump({"split": args.split, "rate": RATE, "items": items}, f, indent=1)
    clean = sum(1 for it in items if not it["problems"])
    print(f"wrote {len(items)} items ({clean} clean) from {len({it['speaker'] for it in items})} {args.split} speakers to {args.out}")


if __name__ == "__main__":
    main()

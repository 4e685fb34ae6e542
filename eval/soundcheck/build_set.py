"""A labelled set for the sound check: real read speech with faults of known size, labelled by
the product's thresholds (Sources/EarshotCapture/SoundCheck.swift, `Threshold`).

Two sets that differ in kind, so that what was tuned on one is judged on the other:

  --split train --noises tuning --rooms generated      the tuning set: LibriSpeech training
      speakers; noise from the six Speech Commands backgrounds (first 70 % of each) and
      UrbanSound8K's air conditioners, drilling and children playing; rooms from an exponential
      decay generator; 16 kHz.
  --split dev --noises held-out --rooms held-out --rates 16000,48000   the held-out set: the
      69 development speakers; noise of kinds the tuning never heard (UrbanSound8K's dogs,
      engines, jackhammers, gun shots and street music; ProtoSound's knocks, appliances and
      cries and Donate-a-Cry's; babble of three to six other development speakers); a real
      seminar room and image-source rooms (`earshot room simulate`); half at 48 kHz.

Every item has a real room tone 30–45 dB under the speech (the family's noise) and speech at
−28…−18 dBFS active level (ITU-T P.56 style); 30 % stay that way (a tenth of those in a real
small room of RT60 0.3 s), the rest get one or two faults (peaks are kept under −1 dBFS unless
the fault is the level):

  too_quiet     speech at −48…−33 dBFS            (product: at or below −31)
  too_loud      speech at −14…−8 dBFS through a look-ahead limiter, peaks at −0.3 dBFS, no
                sample cut, and at least −14.5 dBFS coming out   (product: at or above −15, however limited)
  clipping      hard (0.2–5 % of samples cut flat) or soft (tanh saturation), then scaled to a
                peak of −6…−0.1 dBFS and speech under −15 dBFS
  noisy         real noise of the family at 0–17 dB SNR   (product: under 20 dB)
  hum           50 or 60 Hz and 1–5 harmonics, 8–22 dB under the speech
  narrowband    a channel low-passed at 2.8–4.5 kHz (eighth-order Butterworth, or through 8 kHz)
  muffled       a covered microphone: 15–30 dB less an octave above 1.5–3 kHz, deeper where
                that takes under 17 dB from 3–7 kHz against 1–2 kHz   (product: over 16)
  reverberant   a room of RT60 0.6–1.6 s, the speech's level kept   (product: at or above 0.5 s)
  dc_offset     a constant 0.015–0.1
  dropouts      2–6 gaps of 5–120 ms of digital silence inside the speech
  echo          a copy 80–400 ms late, 3–12 dB down

SNR is the active speech level against the added noise's mean power as both are in the item:
each carried through the faults after the noise (a limiter's and a clipper's gain, a cover's or a
channel's filter, a converter's rate; `Parts`), with the SNR the noise went in at beside it
(`snrAdded`); the hum's distance under the speech likewise (`humBelowDB`, and
`humBelowAddedDB`); RT60 the room response's own (Schroeder, −5 to −35 dB). Seeded; one WAV per
item and items.json.

    .venv/bin/python eval/soundcheck/build_set.py --data ../shared/data --split dev --noises held-out \
        --rooms held-out --rates 16000,48000 --earshot .build/release/earshot --out eval/data/soundcheck/held-out
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.ndimage
import scipy.signal
import soundfile as sf
import soxr

from training import realaudio

RATE = realaudio.RATE
KINDS = ["too_quiet", "too_loud", "clipping", "noisy", "hum", "narrowband", "muffled", "reverberant",
         "dc_offset", "dropouts", "echo"]
# Pairs that cannot both be true of one recording, or that would hide each other.
CLASH = {frozenset(p) for p in [("too_quiet", "too_loud"), ("too_quiet", "clipping"), ("too_loud", "clipping"),
                                  ("narrowband", "muffled"), ("noisy", "too_quiet"), ("too_loud", "dc_offset"),
                                  ("clipping", "dc_offset"), ("reverberant", "echo"), ("too_loud", "hum")]}


def active_power(x, rate=RATE):
    """P.56-style active level: mean power of 10 ms frames within 15.9 dB of that mean."""
    f = rate // 100
    frames = x[: len(x) // f * f].reshape(-1, f)
    p = (frames ** 2).mean(axis=1)
    level = p.mean()
    for _ in range(20):
        active = p > level * 10 ** (-15.9 / 10)
        level = p[active].mean()
    return level


def set_level(x, dbfs, rate=RATE):
    return x * np.sqrt(10 ** (dbfs / 10) / active_power(x, rate))


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


def limited(x, dbfs, ceiling_dbfs=-0.3, rate=RATE):
    """`x` at active level `dbfs`, its peaks held under `ceiling_dbfs` by a look-ahead limiter as
    a recorder's is built: the gain each sample needs, the least of it within 5 ms ahead and
    behind, recovering over 50 ms, averaged over 5 ms (so never above what any sample needs):
    loud, and not one sample cut."""
    y = set_level(x, dbfs, rate)
    need = np.minimum(1.0, 10 ** (ceiling_dbfs / 20) / np.maximum(np.abs(y), 1e-12))
    w = int(0.005 * rate)
    least = scipy.ndimage.minimum_filter1d(need, 2 * w + 1, mode="nearest")
    rise = 1 - np.exp(-1 / (0.05 * rate))
    held = np.empty_like(least)
    g = 1.0
    for n, v in enumerate(least):
        g = min(v, g + (1 - g) * rise)
        held[n] = g
    gain = np.convolve(held, np.ones(w) / w, mode="same")
    return y * np.minimum(gain, need)


def too_loud(x, dbfs, rate=RATE):
    """Limited speech at `dbfs` going in; where the limiter took it under −14.5 dBFS (by the
    active level, as the product measures it) it goes in hotter until it is not, so the label
    holds of the recording."""
    y = limited(x, dbfs, rate=rate)
    for _ in range(10):
        short = -14.5 - 10 * np.log10(active_power(y, rate))
        if short <= 0:
            break
        dbfs += short
        y = limited(x, dbfs, rate=rate)
    return y


class Noises:
    """The real noise of one family, as (kind, recording) pairs."""

    TUNING_URBAN = ("air_conditioner", "drilling", "children_playing")
    HELD_OUT_URBAN = ("dog_bark", "engine_idling", "jackhammer", "gun_shot", "street_music")

    def __init__(self, data, family, bank):
        self.family, self.bank, self.pool = family, bank, []
        if family == "tuning":
            names = sorted(glob.glob(os.path.join(data, "noise", "*.wav")))
            self.pool += [(os.path.basename(n)[:-4], x) for n, x in zip(names, bank.noise)]
        urban = self.TUNING_URBAN if family == "tuning" else self.HELD_OUT_URBAN
        for kind in urban:
            for path in sorted(glob.glob(os.path.join(data, "noise", "urbansound8k", kind, "*.flac")))[::3]:
                self.pool.append((kind, realaudio.load(path)))
        if family == "held-out":
            self.pool += [("household", x) for x in bank.events]

    def draw(self, rng, n):
        """(kind, n samples of it), each kind alike: babble a sixth of the time in the held-out family."""
        if self.family == "held-out" and rng.random() < 1 / 6:
            talkers = int(rng.integers(3, 7))
            babble = sum(set_level(realaudio.segment(rng, self.bank.speech[int(rng.integers(len(self.bank.speech)))], n) + 1e-9, -25)
                         for _ in range(talkers))
            return "babble", babble
        kinds = sorted({kind for kind, _ in self.pool})
        kind = kinds[int(rng.integers(len(kinds)))]
        recordings = [x for k, x in self.pool if k == kind]
        return kind, realaudio.segment(rng, recordings[int(rng.integers(len(recordings)))], n)


class Rooms:
    """Reverberant rooms of RT60 0.6–1.6 s: an exponential-decay generator (tuning), or a real
    seminar room and image-source rooms from `earshot room simulate` (held out)."""

    def __init__(self, data, family, earshot):
        self.family, self.earshot = family, earshot
        clap = os.path.join(data, "rir", "seminar_room_clap_mono.wav")
        self.real = [realaudio.load_rir(clap)] if family == "held-out" and os.path.exists(clap) else []
        if family == "held-out" and not earshot:
            sys.exit("held-out rooms are simulated by earshot: give --earshot")

    def draw(self, rng):
        if self.family == "generated":
            return room(rng, rng.uniform(0.6, 1.6))
        if self.real and rng.random() < 0.25:
            return self.real[0]
        size = np.array([rng.uniform(4, 12), rng.uniform(3, 9), rng.uniform(2.5, 4)])
        rt60, source, mic = rng.uniform(0.6, 1.6), rng.uniform(0.1, 0.9, 3), rng.uniform(0.1, 0.9, 3)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "ir.wav")
            while True:  # a small room ringing long needs too many images: a larger one of its shape
                place = lambda where: ",".join(f"{v:.2f}" for v in where * size)  # noqa: E731
                run = subprocess.run([self.earshot, "room", "simulate", "--size", "x".join(f"{d:.2f}" for d in size),
                                      "--rt60", f"{rt60:.2f}", "--source", place(source), "--mic", place(mic),
                                      "--rate", str(RATE), "-o", out], capture_output=True, text=True)
                if run.returncode == 0:
                    break
                if "image sources" not in run.stderr:
                    sys.exit(run.stderr.strip())
                size = size * 1.25
            h, rate = sf.read(out, dtype="float64")
        h = h if h.ndim == 1 else h[:, 0]
        return h / np.sqrt(np.sum(h ** 2))


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


def shelf(corner, loss_db):
    """A covered microphone: full level below `corner`, `loss_db` less an octave above it."""
    freqs = np.linspace(0, RATE / 2, 513)
    octaves = np.clip(np.log2(np.maximum(freqs, 1) / corner), 0, 1)
    gains = 10 ** (-loss_db * octaves / 20)
    return scipy.signal.firwin2(511, freqs, gains, fs=RATE)


def band_loss(fir):
    """What a filter takes from 3–7 kHz against 1–2 kHz, as the product reads a recording's
    balance (`SpectrumBalance`): the mean of sixth-octave bands' power gains in dB."""
    hz, h = scipy.signal.freqz(fir, worN=8192, fs=RATE)
    power = np.abs(h) ** 2
    centres = 100 * 2 ** (np.arange(37) / 6)

    def mean_db(low, high):
        bands = [c for c in centres if low <= c <= high]
        return np.mean([10 * np.log10(power[(hz >= c * 2 ** (-1 / 12)) & (hz <= c * 2 ** (1 / 12))].mean()) for c in bands])
    return mean_db(1000, 2000) - mean_db(3000, 7000)


def covered(x, corner, loss_db, truth):
    """`x` through a cover that takes at least 17 dB from 3–7 kHz against 1–2 kHz (the label's
    line, 16 dB, and one more): a cover whose corner lies high takes less from that band than
    its loss, and goes deeper until it takes that much, so the label holds of the recording."""
    fir = shelf(corner, loss_db)
    for _ in range(5):
        short = 17 / band_loss(fir)
        if short <= 1:
            break
        loss_db *= short * 1.001
        fir = shelf(corner, loss_db)
    truth["muffleDB"], truth["muffleCornerHz"], truth["muffleBandDB"] = loss_db, corner, band_loss(fir)
    return scipy.signal.fftconvolve(x, fir)[255: 255 + len(x)]


def apply(kind, x, rng, truth, noises, rooms, speech_db, rate=RATE):
    """`x` at `rate` with the fault `kind`; the level, clipping, DC and dropout faults are made
    at the item's own rate (a converter clips and drops at the rate it runs at), the rest at 16 kHz."""
    if kind == "reverberant":
        h = rooms.draw(rng)
        truth["rt60"] = float(schroeder_rt60(h))
        # The room is a fault of its own, not a level's: the speech keeps its active level.
        return set_level(scipy.signal.fftconvolve(x, h)[: len(x)], 10 * np.log10(active_power(x)))
    if kind == "echo":
        delay, gain = rng.uniform(0.08, 0.4), -rng.uniform(3, 12)
        d = int(delay * RATE)
        y = x.copy()
        y[d:] += 10 ** (gain / 20) * x[:-d]
        truth["echoDelay"], truth["echoDB"] = delay, gain
        return y
    if kind == "noisy":
        snr = rng.uniform(0, 17)
        noise_kind, noise = noises.draw(rng, len(x))
        noise = noise * np.sqrt(active_power(x) / np.mean(noise ** 2) * 10 ** (-snr / 10))
        truth["snr"], truth["noise"] = snr, noise_kind
        return x + noise
    if kind == "muffled":
        loss = rng.uniform(15, 30)
        return covered(x, rng.uniform(1500, 3000), loss, truth)
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
    if kind == "too_quiet":
        return set_level(x, rng.uniform(-48, -33))
    if kind == "too_loud":
        return too_loud(x, rng.uniform(-14, -8), rate=rate)
    if kind == "clipping":
        if rng.random() < 0.5:
            share = rng.uniform(0.002, 0.05)
            ceiling = np.quantile(np.abs(x), 1 - share)
            y = np.clip(x, -ceiling, ceiling)
            truth["clipping"] = "hard"
        else:
            drive = rng.uniform(4, 12)
            y = np.tanh(drive * x / np.abs(x).max())
            truth["clipping"] = "soft"
        y = y / np.abs(y).max() * 10 ** (-rng.uniform(0.1, 6) / 20)
        return y * min(1.0, np.sqrt(10 ** (-16 / 10) / active_power(y, rate)))  # loud is its own fault
    if kind == "dc_offset":
        dc = rng.uniform(0.015, 0.1) * (1 if rng.random() < 0.5 else -1)
        truth["dc"] = dc
        return x + dc
    if kind == "dropouts":
        y = x.copy()
        f = rate // 100
        frames = (y[: len(y) // f * f].reshape(-1, f) ** 2).mean(axis=1)
        loud = np.nonzero(frames > np.median(frames))[0]
        count = int(rng.integers(2, 7))
        for start in rng.choice(loud, size=min(count, len(loud)), replace=False):
            length = int(rng.uniform(0.005, 0.12) * rate)
            y[start * f: start * f + length] = 0
        truth["dropouts"] = count
        return y
    raise ValueError(kind)


# Faults a converter makes at the item's own rate, after the others.
LATE = ("too_loud", "clipping", "dc_offset", "dropouts")


ORDER = ["reverberant", "echo", "noisy", "muffled", "narrowband", "hum", "too_quiet", "too_loud", "clipping",
         "dc_offset", "dropouts"]
# Faults that add a sound of their own, which leaves a carried sound and what it lies under as
# they were, and filters, which act on each part as on the whole.
ADDED = ("hum", "dc_offset")
FILTERS = ("muffled", "narrowband")


class Parts:
    """What an added sound (the noise, the hum) was added to, and the sound, as they are in the
    item: each carried through every fault after it, so that the label of how far under the
    speech it lies is the recording's. A limiter, a clipper or a converter that lowers the loud
    moments changes it (a limiter takes the words down and leaves the pauses' noise or hum, and
    squashes a shot more than the words), and a filter takes more of one than of the other; the
    level the sound went in at is not what a listener hears."""

    def __init__(self, under, added):
        self.under, self.added = under, added

    def through(self, kind, before, after, replay):
        """The parts after fault `kind` made `after` of `before`; `replay` does it again to a
        part with the same draws (a filter's)."""
        if kind in ADDED:
            return
        if kind in FILTERS:
            self.under, self.added = replay(self.under), replay(self.added)
            return
        self.gained(before, after)

    def gained(self, before, after):
        """The parts after a gain, sample by sample, that made `after` of `before`: a level, a
        limiter, clipping or dropouts."""
        gain = np.divide(after, before, out=np.zeros_like(after), where=np.abs(before) > 1e-12)
        self.under, self.added = gain * self.under, gain * self.added

    def resampled(self, rate, to):
        self.under, self.added = (soxr.resample(p, rate, to, quality="VHQ") for p in (self.under, self.added))

    def under_db(self, rate):
        """How far the added sound lies under the active level of what it was added to."""
        return float(10 * np.log10(active_power(self.under, rate) / np.mean(self.added ** 2)))


# The labels `Parts` keeps true of the recording, and where each keeps the level it went in at.
CARRIED = {"noisy": ("snr", "snrAdded"), "hum": ("humBelowDB", "humBelowAddedDB")}


def replayed(state):
    """A generator that draws what one in `state` would have drawn."""
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    return rng


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--split", choices=["train", "dev"], required=True, help="LibriSpeech speakers")
    parser.add_argument("--noises", choices=["tuning", "held-out"], default="tuning")
    parser.add_argument("--rooms", choices=["generated", "held-out"], default="generated")
    parser.add_argument("--rates", default="16000", help="item rates, comma-separated, drawn alike")
    parser.add_argument("--earshot", help="the earshot binary, for held-out rooms")
    parser.add_argument("--out", required=True)
    parser.add_argument("--items", type=int, default=440)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    bank = realaudio.Bank(args.data, args.split)
    if not bank:
        sys.exit(f"no LibriSpeech speech or noise under {args.data}: the sound-check set needs ../shared/data")
    noises, rooms = Noises(args.data, args.noises, bank), Rooms(args.data, args.rooms, args.earshot)
    rates = [int(r) for r in args.rates.split(",")]
    rng = np.random.default_rng(args.seed if args.seed is not None else (11 if args.split == "train" else 2027))
    os.makedirs(args.out, exist_ok=True)
    small = [h for h in bank.rooms if schroeder_rt60(h) < 0.45]
    items = []
    for i in range(args.items):
        speaker = int(rng.integers(len(bank.speech)))
        x = bank.speech[speaker]
        if len(x) > 12 * RATE:
            start = int(rng.integers(0, len(x) - 12 * RATE))
            x = x[start: start + 12 * RATE]
        speech_db = rng.uniform(-28, -18)
        x = set_level(x - x.mean(), speech_db)
        truth = {}
        if rng.random() < 0.3:
            faults = []
            if small and rng.random() < 0.1:
                h = small[int(rng.integers(len(small)))]
                truth["rt60"] = float(schroeder_rt60(h))
                x = set_level(scipy.signal.fftconvolve(x, h)[: len(x)], speech_db)
        else:
            faults = [KINDS[int(rng.integers(len(KINDS)))]]
            if rng.random() < 0.4:
                second = [k for k in KINDS if k != faults[0] and frozenset((k, faults[0])) not in CLASH]
                faults.append(second[int(rng.integers(len(second)))])
        # A real room tone under everything, of the family's kinds.
        tone_kind, tone = noises.draw(rng, len(x))
        tone *= np.sqrt(active_power(x) * 10 ** (-rng.uniform(30, 45) / 10) / np.mean(tone ** 2))
        x = x + tone
        truth["roomTone"] = tone_kind
        rate = rates[int(rng.integers(len(rates)))]
        at, carried = RATE, {}
        for kind in sorted(faults, key=ORDER.index):
            if kind in LATE and at != rate:
                x, at = soxr.resample(x, RATE, rate, quality="VHQ"), rate
                for parts in carried.values():
                    parts.resampled(RATE, rate)
            if kind in LATE and not {"too_loud", "clipping"} & set(truth.get("applied", [])):
                before, x = x, headroom(x)
                for parts in carried.values():
                    parts.gained(before, x)
            truth.setdefault("applied", []).append(kind)
            state, before = rng.bit_generator.state, x
            x = apply(kind, x, rng, truth, noises, rooms, speech_db, at)
            for parts in carried.values():
                parts.through(kind, before, x, lambda part: apply(kind, part, replayed(state), {}, noises, rooms, speech_db, at))
            if kind in CARRIED:
                carried[kind] = Parts(before, x - before)
        if at != rate:
            x = soxr.resample(x, RATE, rate, quality="VHQ")
            for parts in carried.values():
                parts.resampled(RATE, rate)
        if not {"too_loud", "clipping"} & set(faults):
            before, x = x, headroom(x)
            for parts in carried.values():
                parts.gained(before, x)
        for kind, parts in carried.items():
            label, added = CARRIED[kind]
            truth[added], truth[label] = truth[label], parts.under_db(rate)
        truth.pop("applied", None)
        name = f"{i:04d}.wav"
        sf.write(os.path.join(args.out, name), x.astype(np.float32), rate, subtype="FLOAT")
        items.append({"file": name, "rate": rate, "problems": sorted(faults), "truth": truth, "speaker": bank.speakers[speaker]})
    with open(os.path.join(args.out, "items.json"), "w") as f:
        json.dump({"split": args.split, "noises": args.noises, "rooms": args.rooms, "rate": RATE, "items": items}, f, indent=1)
    clean = sum(1 for it in items if not it["problems"])
    print(f"wrote {len(items)} items ({clean} clean) from {len({it['speaker'] for it in items})} {args.split} speakers, "
          f"{args.noises} noises, {args.rooms} rooms, to {args.out}")


if __name__ == "__main__":
    main()

"""Your own sounds: a network that hears one sound, recorded again, as the same sound.

A user enrolls the doorbell from one recording; the notifier must find it when it rings again,
through another microphone position, room, distance and level, cut at another point, under other
sounds. Few-shot sound matching (after ProtoSound, CHI 2022): a network maps one second of the
alert detector's features (log-mel and tonality, `features.py`) to a 64-value embedding on the
unit sphere, trained so that two re-recordings of one source lie close and any two sources apart,
a copy of a source a tone or more higher or lower counting as another source (a neighbour's
chime a few notes apart is not the user's). Matching is then a cosine between the stream's last
second and the enrollment's.

Sources, none of them what `make eval-sounds` looks for: excerpts of seeded tonal music
(`tonal_music.py`, training seeds: ringtones, jingles, bells, arpeggios, alternating figures),
beep patterns of appliances and alarms synthesised here, Earshot's synthetic alerts (training
seeds), read speech (LibriSpeech, every other file: the evaluation hears the rest) and spoken
digits (FSDD). Each view is the source re-recorded: a small loudspeaker half the time, a
simulated room, a microphone, another speed (±2 %) and cut (up to 0.3 s), over a background
(read speech, tonal music, coloured noise) at 0–25 dB.

The network is the alert detector's (four convolutions, max and mean pooling, one linear layer),
its convolutions started from the shipped detector's; Earshot runs it with the detector's code.
"""
import argparse
import glob
import json
import os
import subprocess
import time

import numpy as np
import scipy.signal
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from training import features as feat
from training import realaudio as ra
from training import tonal_music
from training import train as detector

from eval.sounds import rerecordings as rr

RATE = 16_000
SOURCE_SECONDS = 1.3
WINDOW = 50  # frames: one second
EMBEDDING = 64


def beeps(rng, seconds):
    """An appliance's or alarm's beep pattern: one to three pitches, square or sine, on and off."""
    n = int(seconds * RATE)
    out = np.zeros(n)
    pitches = rng.uniform(600, 4200, size=rng.integers(1, 4))
    on, off = rng.uniform(0.05, 0.5), rng.uniform(0.03, 0.4)
    square = rng.random() < 0.5
    t0, k = rng.uniform(0, 0.2), 0
    while t0 < seconds:
        m = min(int(on * RATE), n - int(t0 * RATE))
        t = np.arange(m) / RATE
        f = pitches[k % len(pitches)]
        tone = np.sign(np.sin(2 * np.pi * f * t)) * 0.6 if square else np.sin(2 * np.pi * f * t)
        ramp = np.minimum(1, np.minimum(t, t[::-1]) * 400)
        out[int(t0 * RATE):int(t0 * RATE) + m] += tone * ramp * np.exp(-rng.uniform(0, 4) * t)
        t0 += on + off
        k += 1
    return out


def excerpt(rng, x, seconds):
    n = int(seconds * RATE)
    if len(x) <= n:
        return np.pad(x, (0, n - len(x)))
    start = rng.integers(len(x) - n)
    return x[start:start + n]


def sources(rng, data, earshot, count, work, real_music=None):
    """`count` source sounds of SOURCE_SECONDS, each peak-normalised; with `real_music` (a folder
    of Debian's game soundtracks, `package_music.py`) a fifth of them real music."""
    tracks = sorted(glob.glob(f"{real_music}/**/*.ogg", recursive=True))[::3] if real_music else []
    music = [ra.load(p)[: 60 * RATE] for p in tracks[:120]]
    speech = [ra.load(p) for p in sorted(glob.glob(f"{data}/speech/librispeech/*.flac"))[1::2]]
    digits = [ra.load(p) for p in sorted(glob.glob(f"{data}/speech/fsdd/*.wav"))[::5]]
    alerts = []
    if earshot:
        for i, klass in enumerate(("doorbell", "smoke_alarm", "car_horn", "siren") * 40):
            path = f"{work}/alert{i}.wav"
            subprocess.run([earshot, "synth", "alert", "--class", klass, "--seed", str(5_900_000 + i), "--rate", str(RATE), "-o", path],
                           check=True, capture_output=True)
            alerts.append(ra.load(path))
    out = []
    while len(out) < count:
        kind = rng.random()
        if music and rng.random() < 0.2:
            x = excerpt(rng, music[rng.integers(len(music))], SOURCE_SECONDS)
        elif kind < 0.35:
            x = tonal_music.piece(np.random.default_rng(tonal_music.TRAIN_SEEDS + 590_000 + len(out)), SOURCE_SECONDS + 0.2)
        elif kind < 0.6:
            x = beeps(rng, SOURCE_SECONDS)
        elif kind < 0.75 and alerts:
            x = excerpt(rng, alerts[rng.integers(len(alerts))], SOURCE_SECONDS)
        elif kind < 0.9:
            x = excerpt(rng, speech[rng.integers(len(speech))], SOURCE_SECONDS)
        else:
            x = excerpt(rng, digits[rng.integers(len(digits))], SOURCE_SECONDS)
        x = x[: int(SOURCE_SECONDS * RATE)]
        if np.abs(x).max() > 1e-4:
            out.append(x / np.abs(x).max())
    return out


def shifted(x, semitones):
    """x a number of semitones higher or lower (and shorter or longer): another source."""
    ratio = 2 ** (semitones / 12)
    return scipy.signal.resample(x, int(len(x) / ratio))


class Views:
    """Re-recordings of sources, as `rerecordings.py` makes them, but in simulated rooms only
    (the evaluation's measured rooms stay unheard) and over the training's own backgrounds."""

    def __init__(self, data, rng):
        self.rng = rng
        self.speech = [ra.load(p) for p in sorted(glob.glob(f"{data}/speech/librispeech/*.flac"))[1::2]]

    def background(self, n):
        rng = self.rng
        kind = rng.random()
        if kind < 0.4:
            x = excerpt(rng, self.speech[rng.integers(len(self.speech))], n / RATE)
        elif kind < 0.7:
            x = tonal_music.piece(np.random.default_rng(tonal_music.TRAIN_SEEDS + 700_000 + int(rng.integers(10 ** 6))), n / RATE)
        else:
            white = rng.standard_normal(n)
            x = scipy.signal.lfilter([1], [1, -rng.uniform(0.5, 0.99)], white)
        return x[:n]

    def view(self, x):
        rng = self.rng
        speed = rng.uniform(0.98, 1.02)
        y = scipy.signal.resample(x, int(len(x) / speed))
        y = rr.loudspeaker(rng, y) if rng.random() < 0.5 else y
        rir = rr.synthetic_rir(rng, rng.uniform(0.1, 0.9))
        rir[0] *= rng.uniform(0.5, 6)
        y = rr.microphone(rng, scipy.signal.fftconvolve(y, rir)[: len(y)])
        lead = int(rng.uniform(0.0, 0.3) * RATE)
        y = np.concatenate([np.zeros(lead), y])[: int(SOURCE_SECONDS * RATE)]
        y = np.pad(y, (0, int(SOURCE_SECONDS * RATE) - len(y)))
        bed = self.background(len(y))
        snr = rng.uniform(0, 25)
        y = y / (ra.loud_half_rms(y) + 1e-12) * (np.sqrt(np.mean(bed ** 2)) + 1e-12) * 10 ** (snr / 20) + bed
        return y / (np.abs(y).max() + 1e-9) * 10 ** (rng.uniform(-30, -3) / 20)


def window_of(x, rng):
    """One network input from a view: a second of it from its first 0.3 s on."""
    frames = feat.frame_features(x)
    start = int(rng.integers(0, len(frames) - WINDOW + 1))
    return feat.network_input(frames[start:start + WINDOW])


def dataset(args, rng):
    srcs = sources(rng, args.data, args.earshot, args.sources, args.work, args.real_music)
    views = Views(args.data, rng)
    inputs, labels = [], []
    t0 = time.time()
    for i, s in enumerate(srcs):
        for _ in range(args.views):
            inputs.append(window_of(views.view(s), rng)); labels.append(2 * i)
        # The same source two to five semitones away: another sound, two views of it.
        other = shifted(s, rng.choice([-1, 1]) * rng.uniform(2, 5))[: len(s)]
        for _ in range(2):
            inputs.append(window_of(views.view(other), rng)); labels.append(2 * i + 1)
        if i % 500 == 0:
            print(f"  {i}/{len(srcs)} sources, {time.time() - t0:.0f} s", flush=True)
    return np.stack(inputs), np.array(labels)


def background_windows(args, rng, count):
    """`count` windows of the training's backgrounds alone, at any level: what no enrolled sound
    is, each a negative of every sound."""
    views = Views(args.data, rng)
    out = []
    for _ in range(count):
        bed = views.background(int(SOURCE_SECONDS * RATE))
        bed = bed / (np.abs(bed).max() + 1e-9) * 10 ** (rng.uniform(-40, -6) / 20)
        out.append(window_of(bed, rng))
    return np.stack(out)


def embed(model, x):
    return F.normalize(model(x), dim=1)


def contrastive(z, labels, temperature):
    """Supervised contrastive loss: every other view of one's own label is a positive."""
    sim = z @ z.T / temperature
    eye = torch.eye(len(z), dtype=torch.bool)
    sim = sim.masked_fill(eye, -1e9)
    positive = (labels[:, None] == labels[None, :]) & ~eye
    log_prob = sim - torch.logsumexp(sim, dim=1, keepdim=True)
    return -(log_prob * positive).sum(1).div(positive.sum(1).clamp(min=1)).mean()


def batches(labels, rng, groups):
    """Batches of `groups` sounds with all their views, and as many backgrounds."""
    unique = np.unique(labels[labels >= 0])
    rng.shuffle(unique)
    by = {}
    for i, l in enumerate(labels):
        by.setdefault(l, []).append(i)
    backgrounds = np.nonzero(labels < 0)[0]
    for k in range(0, len(unique) - groups + 1, groups):
        extra = rng.choice(backgrounds, size=min(len(backgrounds), groups), replace=False) if len(backgrounds) else []
        yield np.concatenate([np.concatenate([by[l] for l in unique[k:k + groups]]), extra]).astype(np.int64)


def bank_audio(data, rng, minutes, urban=True):
    """What a user's sound must not be taken for, none of it what `make eval-sounds` plays: read
    speech (the LibriSpeech files the evaluation leaves out), spoken digits, seeded tonal music
    (training seeds), beep patterns, and real urban sound and street music (UrbanSound8K's
    training recordings: engines, drills, jackhammers, dogs, children, gun shots; CC BY-NC 3.0,
    left out with `urban=False`, more speech and music in their place); in one-minute pieces with
    level changes."""
    speech = [ra.load(p) for p in sorted(glob.glob(f"{data}/speech/librispeech/*.flac"))[1::2]]
    digits = [ra.load(p) for p in sorted(glob.glob(f"{data}/speech/fsdd/*.wav"))[1::3]]
    urban = ra.UrbanBank(data, "train") if urban else None
    if urban is not None and not urban.noise:
        raise SystemExit(f"train_sounds: no UrbanSound8K recordings under {data}/noise/urbansound8k: "
                         "fetch them, or make the bank --without-urbansound8k")
    pieces = []
    for k in range(int(minutes)):
        n = 60 * RATE
        kind = k % 7 if urban else k % 5
        if kind == 0:
            x = np.concatenate([speech[rng.integers(len(speech))] for _ in range(8)])[:n]
        elif kind == 1:
            x = np.concatenate([np.pad(digits[rng.integers(len(digits))], (0, int(rng.uniform(0.1, 1) * RATE))) for _ in range(120)])[:n]
        elif kind in (2, 3):
            x = tonal_music.piece(np.random.default_rng(tonal_music.TRAIN_SEEDS + 800_000 + k), 60)
        elif kind == 4:
            x = np.concatenate([beeps(rng, 3) * rng.uniform(0.05, 1) + 0.01 * rng.standard_normal(3 * RATE) for _ in range(20)])
        else:
            x = urban.bed(rng, n, urban.noise if kind == 5 or not urban.music else urban.music)
        x = np.pad(x, (0, max(0, n - len(x))))[:n]
        gain = np.repeat(10 ** (rng.uniform(-20, 0, size=12) / 20), n // 12 + 1)[:n]
        pieces.append(x / (np.abs(x).max() + 1e-9) * gain * 0.5)
    return pieces


def covering(points, count):
    """`count` of the points such that every point lies close to one of them (farthest-point
    sampling on the sphere): the best any sound scores on the kept ones is close to its best
    on them all."""
    chosen = [0]
    nearest = points @ points[0]
    for _ in range(count - 1):
        i = int(np.argmin(nearest))
        chosen.append(i)
        nearest = np.maximum(nearest, points @ points[i])
    print(f"  the bank's {count} points cover the {len(points)} within cosine {nearest.min():.3f}", flush=True)
    return points[chosen]


def write_bank(model, path, data, rng, minutes, count, metadata, urban=True):
    model.eval()
    embeddings = []
    with torch.no_grad():
        for x in bank_audio(data, rng, minutes, urban):
            frames = feat.frame_features(x)
            starts = np.arange(0, len(frames) - WINDOW + 1, feat.STRIDE)
            windows = feat.network_input(np.stack([frames[s:s + WINDOW] for s in starts]))
            for k in range(0, len(windows), 512):
                embeddings.append(embed(model, torch.from_numpy(windows[k:k + 512])).numpy())
    points = np.concatenate(embeddings)
    bank = covering(points, min(count, len(points)))
    tensors = detector.fold(model)
    tensors["bank"] = torch.from_numpy(np.ascontiguousarray(bank, dtype=np.float32))
    save_file({k: v.contiguous() for k, v in tensors.items()}, path,
              metadata={**metadata, "embedding": str(EMBEDDING), "window": str(WINDOW), "bank_hours": f"{minutes / 60:.2f}",
                       "bank_noncommercial": "UrbanSound8K (CC BY-NC 3.0)" if urban else "none"})


def write_parity(model, path):
    """The embeddings of the parity signal (`train.parity_signal`), every 100 ms from its first
    whole second, as Earshot's stream computes them."""
    signal = detector.parity_signal(int(2.6 * RATE))
    frames = feat.frame_features(signal)
    ends = list(range(WINDOW - 1, len(frames), feat.STRIDE))
    x = torch.from_numpy(feat.network_input(np.stack([frames[e - WINDOW + 1:e + 1] for e in ends])))
    model.eval()
    with torch.no_grad():
        z = embed(model, x).numpy()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    json.dump({"generator": "training/train_sounds.py", "sampleCount": len(signal), "windowEnds": ends,
               "embeddings": [[round(float(v), 6) for v in row] for row in z]}, open(path, "w"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--earshot", default=".build/release/earshot")
    p.add_argument("--work", default="training/data/sounds")
    p.add_argument("--sources", type=int, default=3000)
    p.add_argument("--views", type=int, default=3)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--backgrounds", type=int, default=0, help="windows of background alone, negatives of every sound")
    p.add_argument("--real-music", default=None, help="a folder of real music (training/data/music) to take a fifth of the sources from")
    p.add_argument("--from-embedding", default=None, help="start from an exported embedding (safetensors) instead of the detector")
    p.add_argument("--groups", type=int, default=64, help="labels a batch holds")
    p.add_argument("--learning-rate", type=float, default=2e-3)
    p.add_argument("--temperature", type=float, default=0.1)
    p.add_argument("--init", default="Sources/EarshotAlerts/Resources/AlertDetector.safetensors")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--weights", default="Sources/EarshotSounds/Resources/SoundEmbedding.safetensors")
    p.add_argument("--parity", default="Tests/EarshotSoundsTests/Fixtures/embedding_parity.json")
    p.add_argument("--bank-minutes", type=int, default=182, help="minutes of audio the bank is made from")
    p.add_argument("--bank-points", type=int, default=10000, help="embeddings the bank keeps")
    p.add_argument("--without-urbansound8k", action="store_true",
                   help="a bank without UrbanSound8K's recordings, which are non-commercial")
    p.add_argument("--bank-only", default=None, help="only make the bank again, for exported weights (safetensors), into --weights")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.work, exist_ok=True)
    if a.bank_only:
        model = detector.AlertNet(outputs=EMBEDDING)
        detector.warm_start(model, a.bank_only)
        training = json.dumps({"sources": a.sources, "views": a.views, "epochs": a.epochs, "seed": a.seed})
        write_parity(model, a.parity)
        return write_bank(model, a.weights, a.data, rng, a.bank_minutes, a.bank_points, {"training": training},
                          urban=not a.without_urbansound8k)
    cache = f"{a.work}/views_{a.seed}_{a.sources}_{a.views}{'_music' if a.real_music else ''}.npz"
    if os.path.exists(cache):
        d = np.load(cache); x, y = d["x"], d["y"]
    else:
        x, y = dataset(a, rng)
        np.savez(cache, x=x, y=y)
    if a.backgrounds:
        bcache = f"{a.work}/backgrounds_{a.seed}_{a.backgrounds}.npy"
        if os.path.exists(bcache):
            b = np.load(bcache)
        else:
            b = background_windows(a, rng, a.backgrounds)
            np.save(bcache, b)
        # Each background its own label, below every sound's: a negative of them all.
        x, y = np.concatenate([x, b]), np.concatenate([y, -1 - np.arange(len(b))])
    print(f"{len(np.unique(y[y >= 0]))} sounds, {len(y)} views, {int((y < 0).sum())} backgrounds", flush=True)
    # Every tenth source and background, to watch.
    held = np.where(y >= 0, np.isin(y // 2, np.arange(0, int(y.max()) // 2 + 1, 10)), np.arange(len(y)) % 10 == 0)
    xt, yt, xv, yv = torch.from_numpy(x[~held]), torch.from_numpy(y[~held]), torch.from_numpy(x[held]), torch.from_numpy(y[held])
    model = detector.AlertNet(outputs=EMBEDDING)
    if a.from_embedding:
        detector.warm_start(model, a.from_embedding)
    elif a.init:
        from safetensors.torch import load_file
        t = load_file(a.init)
        with torch.no_grad():
            for i, conv in enumerate(model.convs):
                conv.weight.copy_(t[f"conv{i}.weight"]); conv.bias.copy_(t[f"conv{i}.bias"])
            for norm in model.norms:
                norm.weight.fill_(1); norm.bias.zero_(); norm.running_mean.zero_(); norm.running_var.fill_(1 - norm.eps)
    opt = torch.optim.AdamW(model.parameters(), lr=a.learning_rate, weight_decay=1e-4)
    steps = a.epochs * (len(np.unique(y[~held & (y >= 0)])) // a.groups)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.learning_rate, total_steps=max(1, steps))
    for epoch in range(a.epochs):
        model.train()
        losses = []
        for idx in batches(y[~held], rng, a.groups):
            loss = contrastive(embed(model, xt[idx]), yt[idx], a.temperature)
            opt.zero_grad(); loss.backward(); opt.step(); sched.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            z = embed(model, xv)
            sim = z @ z.T
            same = (yv[:, None] == yv[None, :]) & ~torch.eye(len(yv), dtype=torch.bool)
            pos, neg = sim[same], sim[~same & ~torch.eye(len(yv), dtype=torch.bool)]
            # Share of positive pairs above the 99.9th percentile of negative ones.
            found = (pos > torch.quantile(neg, 0.999)).float().mean().item()
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}, watched pairs found at 0.1 % false {found:.3f}", flush=True)
    os.makedirs(os.path.dirname(a.weights), exist_ok=True)
    write_parity(model, a.parity)
    write_bank(model, a.weights, a.data, rng, a.bank_minutes, a.bank_points,
               {"training": json.dumps({"sources": a.sources, "views": a.views, "epochs": a.epochs, "seed": a.seed})},
               urban=not a.without_urbansound8k)
    print(f"wrote {a.weights}")


if __name__ == "__main__":
    main()

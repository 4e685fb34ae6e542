"""The sound check's pause detector: which 10 ms frames of a recording hold no speech of the
talker, so that the noise between words is measured as its mean, bursts included
(Sources/EarshotCapture/PauseDetector.swift; docs/sound-check.md).

A small network (70 features, 64 and 32 ReLU units, one logistic output) trained on mixtures of
LibriSpeech *training* speakers with the noise kinds of `make eval-soundcheck`'s tuning set (the
first 70 % of the Speech Commands backgrounds; UrbanSound8K's air conditioners, drilling and
children playing, training recordings only), and, a fifth of the time each, other voices (one
to three other training speakers, 3 dB or more under the talker) and sounds that are not speech
(the training split's real sirens, horns and ProtoSound alerts, and synthetic knocks and
bangs); SNR −5…45 dB, speech at −45…−10 dBFS, half through a generated or a measured (training
split) room, 15 % with an echo, 15 % with mains hum, 10 % with dropouts. None of the held-out
set's noise kinds (dogs, engines, jackhammers, gun shots, street music, household sounds,
cries), speakers or rooms; its babble (three to six development speakers) is of a kind the
other voices stand for. A frame is a pause where the talker's power (its room decay and echo
included) is under a quarter of the noise's there, or 40 dB under the talker's active level.

Beside it, in the same file (`share.layer…`), a second network of the same shape and features:
the noise's share of each frame's power, trained with cross-entropy on that share as a soft
target (torch), on mixtures of the same kind of which three in ten carry synthetic knocks,
bangs and rattles; the sound check adds what it finds under the words to the pauses' noise.
`--only pauses|share` trains one and keeps the other as shipped (the shipped share network:
`--only share`).

UrbanSound8K is CC BY-NC 3.0: weights trained with it are for non-commercial use. `--no-urbansound`
leaves it out.

    .venv/bin/pip install -e '.[train]'
    .venv/bin/python training/train_pauses.py --data ../shared/data
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
import scipy.signal
from safetensors.numpy import load_file, save_file

from training import pause_features
from training import realaudio
from eval.soundcheck.build_set import active_power, room, set_level

TINY = 1e-14
# The share network's targets stop at −40 dB (PauseDetector.leastNoiseShare).
SHARE_FLOOR_DB = -40.0
SHARE_LEAST = 10 ** (SHARE_FLOOR_DB / 10)
HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHTS = os.path.join(HERE, "..", "Sources", "EarshotCapture", "Resources", "PauseDetector.safetensors")
FIXTURE = os.path.join(HERE, "..", "Tests", "EarshotCaptureTests", "Fixtures", "pauses.json")
URBAN_KINDS = ("air_conditioner", "drilling", "children_playing")


def noise_pools(data, bank, urban):
    """Backgrounds, and real sounds that are not speech (alerts), of the training split."""
    backgrounds = list(bank.noise)
    others = [x for clips in bank.alerts.values() for x in clips]
    if urban:
        for kind in URBAN_KINDS:
            for p in sorted(glob.glob(os.path.join(data, "noise", "urbansound8k", kind, "*.flac"))):
                if realaudio.urban_split(p) == "train":
                    backgrounds.append(realaudio.load(p))
        for kind in ("siren", "car_horn"):
            for p in sorted(glob.glob(os.path.join(data, "alerts", "urbansound8k", kind, "*.flac"))):
                if realaudio.urban_split(p) == "train":
                    others.append(realaudio.load(p))
    return backgrounds, others


def bangs(rng, seconds=10):
    """Knocks, slams and bangs of no real recording: decaying noise bursts at random moments,
    some darker, some brighter, at levels 0–20 dB apart."""
    R = realaudio.RATE
    y, t = 1e-6 * rng.standard_normal(seconds * R), 0
    while True:
        t += int(rng.exponential(rng.uniform(0.3, 3)) * R)
        if t >= len(y):
            return y
        length = int(rng.uniform(0.005, 0.4) * R)
        burst = rng.standard_normal(length) * np.exp(-np.arange(length) / (length / rng.uniform(2, 6)))
        if rng.random() < 0.5:
            burst = np.cumsum(burst) * 0.05
        if rng.random() < 0.5:
            burst = np.diff(burst, prepend=0)
        end = min(len(y), t + length)
        y[t:end] += burst[: end - t] * 10 ** (rng.uniform(-20, 0) / 20)


def rattles(rng, seconds=10):
    """Hammering, rapid fire, typing: stretches of short bursts 40–200 ms apart, of no real
    recording, whose gaps a low percentile reads as the noise floor."""
    R = realaudio.RATE
    y, t = 1e-6 * rng.standard_normal(seconds * R), 0
    while t < len(y):
        t += int(rng.uniform(0.2, 3) * R)
        end, gap = min(len(y), t + int(rng.uniform(0.3, 4) * R)), rng.uniform(0.04, 0.2)
        tilt, level = rng.uniform(-1, 1), 10 ** (rng.uniform(-10, 0) / 20)
        while t < end:
            length = int(rng.uniform(0.005, 0.8 * gap) * R)
            burst = rng.standard_normal(length) * np.exp(-np.arange(length) / (length / rng.uniform(2, 5)))
            burst = burst + tilt * np.diff(burst, prepend=0)
            stop = min(len(y), t + length)
            y[t:stop] += burst[: stop - t] * level * 10 ** (rng.uniform(-4, 0) / 20)
            t += int(gap * rng.uniform(0.7, 1.3) * R)
    return y


def mains_hum(rng, n):
    R = realaudio.RATE
    t = np.arange(n) / R
    f0 = 50.0 if rng.random() < 0.5 else 60.0
    return sum(rng.uniform(0.3, 1) / h * np.sin(2 * np.pi * f0 * h * t + rng.uniform(0, 6.3)) for h in range(1, int(rng.integers(2, 7))))


def voices(rng, bank, n):
    """One to three other talkers of the training split, each at its own level."""
    y = np.zeros(n)
    for _ in range(int(rng.integers(1, 4))):
        v = realaudio.segment(rng, bank.speech[int(rng.integers(len(bank.speech)))], n)
        y += v / np.sqrt(np.mean(v ** 2) + 1e-20) * 10 ** (rng.uniform(-6, 0) / 20)
    return y


def mixture(rng, bank, backgrounds, others, others_share=0.25):
    """(features, pause labels, noise shares) of the audible frames of one seeded mixture; a
    share is the noise's part of the frame's power in dB, within −40…0. The talker's signal
    carries its room's decay and any echo of it: those are not the noise between words."""
    R = realaudio.RATE
    s = bank.speech[int(rng.integers(len(bank.speech)))]
    length = int(rng.uniform(4, 12) * R)
    if len(s) > length:
        start = int(rng.integers(0, len(s) - length))
        s = s[start: start + length]
    s = s - s.mean()
    if rng.random() < 0.5:
        h = room(rng, rng.uniform(0.3, 2.0)) if rng.random() < 0.5 or not bank.rooms else bank.rooms[int(rng.integers(len(bank.rooms)))]
        s = scipy.signal.fftconvolve(s, h)[: len(s)]
    if rng.random() < 0.15:
        delay = int(rng.uniform(0.08, 0.4) * R)
        s[delay:] += 10 ** (-rng.uniform(3, 12) / 20) * s[:-delay].copy()
    s = set_level(s, rng.uniform(-45, -10))
    tone = realaudio.segment(rng, backgrounds[int(rng.integers(len(backgrounds)))], len(s))
    tone = tone * np.sqrt(active_power(s) * 10 ** (-rng.uniform(25, 50) / 10) / (np.mean(tone ** 2) + 1e-20))
    if rng.random() < 0.2:
        # Another voice as loud as the talker's is a conversation, not a recording of one talker.
        noise, lowest = voices(rng, bank, len(s)), 3
    else:
        pool = others if others and rng.random() < others_share else backgrounds
        noise, lowest = realaudio.segment(rng, pool[int(rng.integers(len(pool)))], len(s)), -5
    noise = noise * np.sqrt(active_power(s) / (np.mean(noise ** 2) + 1e-20) * 10 ** (-rng.uniform(lowest, 45) / 10))
    noise = noise + tone
    if rng.random() < 0.15:
        hum = mains_hum(rng, len(s))
        noise = noise + hum * np.sqrt(active_power(s) * 10 ** (-rng.uniform(8, 30) / 10) / np.mean(hum ** 2))
    if rng.random() < 0.1:
        # Dropouts: the cut's edges are the talker's, not noise.
        for _ in range(int(rng.integers(1, 7))):
            gap = int(rng.uniform(0.003, 0.12) * R)
            at = int(rng.integers(0, max(1, len(s) - gap)))
            s[at: at + gap] = 0
            noise[at: at + gap] = 0
    f, _, audible = pause_features.features(s + noise)
    talker = pause_features.spectrogram(s).sum(1)
    rest = pause_features.spectrogram(noise).sum(1)
    pause = (talker < 0.25 * rest) | (talker < pause_features.active_level(talker) * 1e-4)
    share = np.clip(10 * np.log10((rest + TINY) / (talker + rest + TINY)), SHARE_FLOOR_DB, 0)
    return f[audible], pause[audible], share[audible]


def fixture_signal():
    """A 3 s test signal both sides make alike: voiced bursts with pauses over noise (a 32-bit
    linear congruential generator) that swells for 0.2 s."""
    R = realaudio.RATE
    t = np.arange(3 * R) / R
    state, uniform = 12345, np.empty(len(t))
    for n in range(len(t)):
        state = (1664525 * state + 1013904223) % 2 ** 32
        uniform[n] = state / 2 ** 32 - 0.5
    voiced = sum(np.sin(2 * np.pi * 140 * h * t) / h for h in range(1, 12)) * (np.sin(2 * np.pi * 2 * t) > 0.2)
    noise = uniform * (0.05 + 0.5 * (np.abs(t - 1.3) < 0.1))
    return (0.05 * voiced + noise).astype(np.float32)


def share_mixtures(args, bank, backgrounds, others):
    """(features, noise shares) of the share network's own mixtures: three in ten draw their
    noise from synthetic knocks, bangs and rattles, since a burst under a word is what the
    share network is for."""
    rng = np.random.default_rng(11)
    bursty = [bangs(rng) for _ in range(60)] + [rattles(rng) for _ in range(60)]
    parts = []
    for _ in range(args.mixtures):
        burst = rng.random() < 0.3
        parts.append(mixture(rng, bank, backgrounds, bursty if burst else others, others_share=0.9 if burst else 0.25))
    return np.concatenate([f for f, _, _ in parts]), np.concatenate([s for _, _, s in parts])


def train_share(X, share_db, epochs):
    """The share network: the pause detector's shape, trained with cross-entropy on the noise's
    share of each frame (a soft target), so that its output is the expected share, not a guess
    at the likelier side; the noise's mean power sums the shares linearly."""
    import torch  # training's own
    torch.manual_seed(0)
    torch.set_num_threads(os.cpu_count() or 1)
    x = torch.tensor(X, dtype=torch.float32)
    y = torch.tensor(10 ** (share_db / 10), dtype=torch.float32)
    # Validation frames, drawn from the same mixtures: a check on the fit, not a held-out figure.
    order = torch.randperm(len(x))
    checked, kept = order[:100_000], order[100_000:]
    net = torch.nn.Sequential(torch.nn.Linear(pause_features.FEATURES, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimiser = torch.optim.Adam(net.parameters(), 1e-3, weight_decay=1e-5)
    loss = torch.nn.BCEWithLogitsLoss()
    for epoch in range(epochs):
        if epoch == epochs // 2:
            optimiser.param_groups[0]["lr"] = 3e-4
        for i in range(0, len(kept), 1024):
            batch = kept[i:i + 1024]
            optimiser.zero_grad()
            loss(net(x[batch])[:, 0], y[batch]).backward()
            optimiser.step()
        kept = kept[torch.randperm(len(kept))]
        with torch.no_grad():
            print(f"share epoch {epoch + 1}: validation cross-entropy {float(loss(net(x[checked])[:, 0], y[checked])):.4f}", flush=True)
    linear = [m for m in net if isinstance(m, torch.nn.Linear)]
    return {f"share.layer{i}.weight": m.weight.detach().numpy().astype(np.float32) for i, m in enumerate(linear)} | \
        {f"share.layer{i}.bias": m.bias.detach().numpy().astype(np.float32) for i, m in enumerate(linear)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--mixtures", type=int, default=4000)
    parser.add_argument("--frames", type=int, default=1_000_000, help="frames drawn from them to train on")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--no-urbansound", dest="urban", action="store_false",
                        help="train without UrbanSound8K (CC BY-NC 3.0)")
    parser.add_argument("--threshold", type=float, default=0.85,
                        help="the probability over which a frame is a pause (chosen on the tuning set of make eval-soundcheck)")
    parser.add_argument("--only", choices=["pauses", "share"],
                        help="train one of the two networks and keep the other as shipped")
    parser.add_argument("--fixture-only", action="store_true", help="only write the test fixture of the shipped weights")
    args = parser.parse_args()
    if args.fixture_only:
        write_fixture(load_file(WEIGHTS))
        return
    bank = realaudio.Bank(args.data, "train")
    if not bank:
        sys.exit(f"no LibriSpeech speech or noise under {args.data}")
    backgrounds, others = noise_pools(args.data, bank, args.urban)
    shipped = load_file(WEIGHTS) if args.only else {}
    tensors = {k: v for k, v in shipped.items() if k.startswith("share.") == (args.only == "pauses")}
    if args.only != "share":
        tensors |= train_pauses(args, bank, backgrounds, list(others))
    if args.only != "pauses":
        X, share = share_mixtures(args, bank, backgrounds, list(others))
        print(f"{len(X)} frames for the share network, mean share {share.mean():.1f} dB")
        tensors |= train_share(X, share, args.epochs)
    tensors["band_edges"] = pause_features.band_edges().astype(np.float32)
    os.makedirs(os.path.dirname(WEIGHTS), exist_ok=True)
    save_file(tensors, WEIGHTS, metadata={
        "features": str(pause_features.FEATURES), "threshold": str(args.threshold),
        "licence": "trained with UrbanSound8K (CC BY-NC 3.0): non-commercial use" if args.urban else "no non-commercial data"})
    write_fixture(tensors)
    print(f"wrote {WEIGHTS} and {FIXTURE}")


def train_pauses(args, bank, backgrounds, others):
    """The pause network: whether each frame is a pause."""
    from sklearn.neural_network import MLPClassifier  # training's own: the evaluation borrows `bangs` without it
    rng = np.random.default_rng(1)
    others += [bangs(rng) for _ in range(60)]
    parts = [mixture(rng, bank, backgrounds, others) for _ in range(args.mixtures)]
    X = np.concatenate([f for f, _, _ in parts])
    Y = np.concatenate([y for _, y, _ in parts])
    chosen = rng.permutation(len(X))[: args.frames]
    print(f"{len(X)} frames from {args.mixtures} mixtures, {Y.mean():.2f} of them pauses; training on {len(chosen)}")
    model = MLPClassifier(hidden_layer_sizes=(64, 32), alpha=1e-4, batch_size=512, max_iter=args.epochs,
                          early_stopping=True, random_state=0)
    model.fit(X[chosen], Y[chosen])
    print(f"frames judged rightly: {model.score(X[chosen[:50000]], Y[chosen[:50000]]):.3f} (training), "
          f"validation {model.best_validation_score_:.3f}")
    tensors = {f"layer{i}.weight": np.ascontiguousarray(w.T, dtype=np.float32) for i, w in enumerate(model.coefs_)}
    return tensors | {f"layer{i}.bias": b.astype(np.float32) for i, b in enumerate(model.intercepts_)}


def pause_probability(tensors, f, prefix=""):
    """A network's forward pass, as PauseDetector.swift runs it: the pause network's, or with
    `prefix` "share." the share network's."""
    h = f.astype(np.float64)
    layers = sum(1 for name in tensors if name.startswith(prefix + "layer") and name.endswith(".weight"))
    for i in range(layers):
        h = h @ tensors[f"{prefix}layer{i}.weight"].T.astype(np.float64) + tensors[f"{prefix}layer{i}.bias"]
        h = np.maximum(h, 0) if i < layers - 1 else h
    return 1 / (1 + np.exp(-h[:, 0]))


def write_fixture(tensors):
    f, _, _ = pause_features.features(fixture_signal())
    p = pause_probability(tensors, f)
    share = np.maximum(SHARE_LEAST, pause_probability(tensors, f, "share."))
    os.makedirs(os.path.dirname(FIXTURE), exist_ok=True)
    with open(FIXTURE, "w") as out:
        json.dump({"made_by": "training/train_pauses.py --fixture-only (fixture_signal, features, the shipped weights)",
                   "features": f[::10].round(5).tolist(), "frames": list(range(0, len(f), 10)),
                   "pause_probability": p.round(5).tolist(), "noise_share": share[::10].round(6).tolist()}, out)


if __name__ == "__main__":
    main()

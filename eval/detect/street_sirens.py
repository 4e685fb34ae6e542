"""Street sirens in real audio: a detector's siren recall on recordings like a passing ambulance's.

240 recordings of 3 s, each a street siren (`realaudio.street_siren`, seeds training never uses)
with its own traffic 0-20 dB under it, placed 3-5 s into 10 s of real development audio
(speech, noisy speech, babble, household, music-like, TV; development speakers and clips) at
-5, 0, +5 and +10 dB, through rooms and microphone colour. Each detector's decisions go through
`train.track` at the operating point its weights carry. The generator is the one training
uses, so this set flatters a network trained on it; it says what the synthesis alone cannot.

    .venv/bin/python eval/detect/street_sirens.py WEIGHTS.safetensors [MORE.safetensors ...]
"""
import os
import sys

import numpy as np

from training import features as feat
from training import realaudio as ra
from training import train as tr

HERE = os.path.dirname(os.path.abspath(__file__))

CACHE = os.path.join(HERE, "..", "data", "detect", "street_sirens.npz")
SNRS = [-5, 0, 5, 10]
SEEDS = 9_000_000  # training's street sirens come from clip seeds 7_100_000 on


def build(data):
    bank = ra.Bank(data, "dev")
    if not bank:
        raise SystemExit(f"no real recordings under {data}: cannot build the street-siren set")
    frames, targets = [], []
    for i in range(240):
        rng = np.random.default_rng(SEEDS + i)
        n = 10 * ra.RATE
        bed, _ = ra.background(rng, bank, n)
        recording = ra.street_siren(rng, 3.0)
        recording = recording / ra.rms(recording) + ra.traffic(rng, len(recording)) * 10 ** (-rng.uniform(0, 20) / 20)
        start = int(rng.uniform(3, 5) * ra.RATE)
        mix, _ = ra.place_alert(rng, bank, recording, bed, SNRS[i % 4], start)
        mix, = ra.finish(rng, mix)
        f = feat.frame_features(mix)
        at = np.arange(len(f)) * feat.HOP
        frames.append(f)
        targets.append(np.where((at >= start) & (at < start + len(recording)), 1, 0))
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    np.savez(CACHE + ".tmp.npz", frames=np.stack(frames), targets=np.stack(targets))
    os.replace(CACHE + ".tmp.npz", CACHE)


def main():
    weights = sys.argv[1:]
    if not weights:
        raise SystemExit(__doc__)
    if not os.path.exists(CACHE):
        build(os.path.join(HERE, "..", "..", "..", "shared", "data"))
    stored = np.load(CACHE)
    frames, targets = stored["frames"], stored["targets"]
    for path in weights:
        decisions, point = tr.decisions_at_operating_point(path, frames)
        whole = tr.judge(decisions, targets, *point)
        by_snr = [tr.judge(decisions[k::4], targets[k::4], *point)["recall"]["siren"] for k in range(4)]
        print(f"{path}: siren recall {whole['recall']['siren']:.3f}; at " +
              ", ".join(f"{s:+d} dB {r:.3f}" for s, r in zip(SNRS, by_snr)) +
              f"; median delay {whole['median delay']} s")


if __name__ == "__main__":
    main()

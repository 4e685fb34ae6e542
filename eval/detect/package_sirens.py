"""Real siren recordings from outside ../shared/data: a detector's siren recall on them.

`../shared/data` holds five 1 s real sirens; Debian's free game packages hold four more real
recordings of emergency vehicles, never used in training or in choosing an operating point.
They are fetched by `package_recordings.fetch`, each placed 40 times (10 beds x -5, 0, +5,
+10 dB) 3-5 s into 10 s of real development audio (speech, noisy speech, babble, household,
music-like, TV), through rooms and microphone colour.
Each detector's decisions go through `train.track` at the operating point its weights carry.

    .venv/bin/python eval/detect/package_sirens.py WEIGHTS.safetensors [MORE.safetensors ...]
"""
import os
import sys

import numpy as np

from training import features as feat
from training import realaudio as ra
from training import train as tr
from eval.detect.package_recordings import PLACEMENTS, RECORDINGS, SNRS, fetch

HERE = os.path.dirname(os.path.abspath(__file__))

SEEDS = 9_500_000


def build(paths, data):
    bank = ra.Bank(data, "dev")
    if not bank:
        raise SystemExit(f"no real recordings under {data}: cannot build the package-siren set")
    frames, targets = [], []
    for r, path in enumerate(paths):
        recording = ra.trim(ra.load(path))
        for i in range(PLACEMENTS):
            rng = np.random.default_rng(SEEDS + 1000 * r + i)
            n = 10 * ra.RATE
            bed, _ = ra.background(rng, bank, n)
            start = int(rng.uniform(3, 5) * ra.RATE)
            piece = recording[:n - start]
            mix, _ = ra.place_alert(rng, bank, piece, bed, SNRS[i % len(SNRS)], start)
            mix, = ra.finish(rng, mix)
            f = feat.frame_features(mix)
            at = np.arange(len(f)) * feat.HOP
            frames.append(f)
            targets.append(np.where((at >= start) & (at < start + len(piece)), 1, 0))
    return np.stack(frames), np.stack(targets)


def main():
    weights = sys.argv[1:]
    if not weights:
        raise SystemExit(__doc__)
    frames, targets = build(fetch(), os.path.join(HERE, "..", "..", "..", "shared", "data"))
    for path in weights:
        decisions, point = tr.decisions_at_operating_point(path, frames)
        whole = tr.judge(decisions, targets, *point)
        print(f"{path}: siren recall {whole['recall']['siren']:.3f}, median delay {whole['median delay']} s")
        for r, (name, _, _) in enumerate(RECORDINGS):
            part = slice(r * PLACEMENTS, (r + 1) * PLACEMENTS)
            by_snr = [tr.judge(decisions[part][k::len(SNRS)], targets[part][k::len(SNRS)], *point)["recall"]["siren"]
                      for k in range(len(SNRS))]
            print(f"  {name:40s} " + ", ".join(f"{s:+d} dB {v:.2f}" for s, v in zip(SNRS, by_snr)))


if __name__ == "__main__":
    main()

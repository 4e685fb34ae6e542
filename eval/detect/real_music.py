"""R6 and R6b of `evaluate.py` (real music never trained on or tuned with) through several
detectors at once: false alarms per hour in the music, and recall of the real sirens and smoke
alarms placed in it. The mixtures are evaluate.py's own (built here where absent); the hour of
music is heard as 12 s recordings, each through `train.track` at the operating point its weights
carry (`evaluate.py` hears whole minutes through `earshot detect`).

    .venv/bin/python eval/detect/real_music.py WEIGHTS.safetensors [MORE.safetensors ...]
"""
import json
import os
import sys

import numpy as np
import soundfile as sf

from eval.detect import evaluate
from training import features as feat
from training import train as tr

HERE = os.path.dirname(os.path.abspath(__file__))

PIECE = 12 * feat.SAMPLE_RATE


def features(stems):
    """Each stem's 12 s pieces as frames, and per-frame targets from its labels."""
    frames, targets = [], []
    for stem in stems:
        audio, _ = sf.read(stem + ".wav", dtype="float64")
        labels = json.load(open(stem + ".json"))
        for at in range(0, len(audio) - PIECE + 1, PIECE):
            f = feat.frame_features(audio[at:at + PIECE])
            seconds = (at + np.arange(len(f)) * feat.HOP) / feat.SAMPLE_RATE
            t = np.zeros(len(f), np.int64)
            for label in labels:
                t[(seconds >= label["start"]) & (seconds < label["end"])] = feat.CLASSES.index(label["class"])
            frames.append(f)
            targets.append(t)
    return np.stack(frames), np.stack(targets)


def main():
    weights = sys.argv[1:]
    if not weights:
        raise SystemExit(__doc__)
    quiet, alerts = evaluate.real_music_sets(os.path.join(HERE, "..", "data", "detect", "realaudio", "music"),
                                             os.path.join(HERE, "..", "..", "..", "shared", "data"), 60)
    if not quiet:
        raise SystemExit("no real music: cannot evaluate")
    frames, targets = features(quiet + alerts)
    for path in weights:
        decisions, point = tr.decisions_at_operating_point(path, frames)
        result = tr.judge(decisions, targets, *point)
        recall = ", ".join(f"{c} {result['recall'][c]:.3f}" for c in ("siren", "smoke_alarm"))
        print(f"{path}: {result['false alarms per hour']} false alarms an hour in real music; "
              f"recall in it {recall}; median delay {result['median delay']} s")


if __name__ == "__main__":
    main()

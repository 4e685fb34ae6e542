"""The long-term average speech spectrum in Earshot's amplification bands, from real read speech.

Prints each band's share of the overall speech level (dB), the table `Prescription.speechBandShareDB`
holds: the wide dynamic range compressor reads band levels, and the fitting's knee points, given
for whole speech at 50/65/80 dB SPL, become band levels through these shares. Measured on the
LibriSpeech speakers of the training split (training/realaudio.py), pauses left out.

    .venv/bin/python eval/amplify/ltass.py --data ../shared/data
"""
import argparse
import glob
import os
import sys

import numpy as np
import scipy.signal

from training import realaudio

CENTRES = [250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]


def band_edges(rate):
    edges = [0.0] + [float(np.sqrt(a * b)) for a, b in zip(CENTRES, CENTRES[1:])] + [rate / 2]
    return list(zip(edges, edges[1:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--files", type=int, default=600)
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(args.data, "speech", "librispeech", "*.flac")))
    files = [f for f in files if not realaudio.is_dev("speaker" + os.path.basename(f).split("-")[0])][: args.files]
    if not files:
        sys.exit(f"no LibriSpeech files under {args.data}")
    rate, frame = realaudio.RATE, 512
    total = np.zeros(frame // 2 + 1)
    for path in files:
        x = realaudio.load(path)
        _, _, spec = scipy.signal.stft(x, rate, window="hann", nperseg=frame, noverlap=frame // 2, boundary=None)
        power = np.abs(spec) ** 2
        energy = power.sum(axis=0)
        active = energy > energy.max() * 10 ** (-40 / 10)  # pauses and silence left out
        total += power[:, active].sum(axis=1) / max(1, active.sum())
    freqs = np.fft.rfftfreq(frame, 1 / rate)
    share = []
    for lo, hi in band_edges(rate):
        in_band = (freqs >= lo) & (freqs < hi) if hi < rate / 2 else (freqs >= lo)
        share.append(10 * np.log10(total[in_band].sum() / total.sum()))
    print(f"# {len(files)} utterances from {len({os.path.basename(f).split('-')[0] for f in files})} speakers")
    print("[" + ", ".join(f"{s:.1f}" for s in share) + "]")


if __name__ == "__main__":
    main()

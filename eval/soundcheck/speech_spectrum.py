"""The long-term average spectrum of read speech in sixth-octave bands, the reference the sound
check holds a recording against (`SpectrumBalance.referenceDB`): a covered microphone shows as a
high-frequency loss against it, a narrow channel as a cliff.

Measured on the LibriSpeech speakers of the training split (training/realaudio.py), over frames
within 40 dB of each utterance's loudest, as dB per band relative to the mean of the bands from
300 Hz to 1 kHz; centres 100 Hz · 2^(i/6) up to 8 kHz.

    .venv/bin/python eval/soundcheck/speech_spectrum.py --data ../shared/data
"""
import argparse
import glob
import os
import sys

import numpy as np
import scipy.signal

from training import realaudio

CENTRES = [100 * 2 ** (i / 6) for i in range(0, 37)]  # 100 Hz … 6.4 kHz·1.25 = 8 kHz


def band_levels(power, freqs):
    """dB per sixth-octave band (mean power of the bins inside)."""
    out = []
    for c in CENTRES:
        lo, hi = c * 2 ** (-1 / 12), min(c * 2 ** (1 / 12), freqs[-1])
        inside = (freqs >= lo) & (freqs <= hi)
        out.append(10 * np.log10(power[inside].mean() + 1e-20))
    return np.array(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--files", type=int, default=600)
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(args.data, "speech", "librispeech", "*.flac")))
    files = [f for f in files if not realaudio.is_dev("speaker" + os.path.basename(f).split("-")[0])][: args.files]
    if not files:
        sys.exit(f"no LibriSpeech files under {args.data}")
    rate, frame = realaudio.RATE, 2048
    total = np.zeros(frame // 2 + 1)
    for path in files:
        x = realaudio.load(path)
        _, _, spec = scipy.signal.stft(x, rate, window="hann", nperseg=frame, noverlap=frame * 3 // 4, boundary=None)
        power = np.abs(spec) ** 2
        energy = power.sum(axis=0)
        active = energy > energy.max() * 10 ** (-40 / 10)
        total += power[:, active].mean(axis=1) / power[:, active].sum(axis=0).mean()
    freqs = np.fft.rfftfreq(frame, 1 / rate)
    levels = band_levels(total, freqs)
    mid = [i for i, c in enumerate(CENTRES) if 300 <= c <= 1000]
    levels -= levels[mid].mean()
    print(f"# {len(files)} utterances from {len({os.path.basename(f).split('-')[0] for f in files})} speakers")
    print("[" + ", ".join(f"{v:.1f}" for v in levels) + "]")


if __name__ == "__main__":
    main()

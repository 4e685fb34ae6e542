"""The sound check on faults made by another generator than build_set.py, on speech from outside
LibriSpeech: SoX's filters and echo on the MS-SNSD pairs (`noisy_speech/mssnsd/`), nothing of
which was tuned on.

On the clean files: a telephone channel (through 8 kHz), steep low-passes at 3.4 and 4.5 kHz
(`sinc`), which should read `narrowband`; treble shelves of −20 dB at 3 kHz and −25 dB at 2 kHz,
which should read `muffled` and not `narrowband`. On the noisy files: an echo 250 ms late, 0.4
down (`echo 0.6 0.9 250 0.4`), which should read `echo` with the SNR of the echoed pair: the
clean file's active level over the mean power of noisy less clean, as `snr.py` reads it, each
through the same echo (it is linear), as the recording holds them. And a mains buzz of another
generator than build_set.py's hum (a softened saturated sine, odd harmonics, 0.1 Hz off 50 or
60 Hz, 8–20 dB under the speech) on every third clean file: the speech level should read as
without it.

    .venv/bin/python eval/soundcheck/sox_faults.py --earshot .build/release/earshot --data ../shared/data
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import soundfile as sf

from eval.soundcheck.build_set import active_power
from eval.soundcheck.evaluate import check
from eval.soundcheck.snr import mssnsd_pairs

CHANNELS = {  # name: (SoX effect, the finding it should draw)
    "telephone, through 8 kHz": (["rate", "8000", "rate", "16000"], "narrowband"),
    "low-pass at 3.4 kHz": (["sinc", "-3400"], "narrowband"),
    "low-pass at 4.5 kHz": (["sinc", "-4500"], "narrowband"),
    "treble shelf −20 dB at 3 kHz": (["treble", "-20", "3000", "0.5s"], "muffled"),
    "treble shelf −25 dB at 2 kHz": (["treble", "-25", "2000", "0.5s"], "muffled"),
}
ECHO = ["echo", "0.6", "0.9", "250", "0.4"]


def sox(source, effect, out):
    subprocess.run(["sox", source, "-b", "32", "-e", "floating-point", out] + effect, check=True, capture_output=True)
    return out


def echoed_snr(pair, effect, tmp):
    """The SNR of `pair` once `effect` has acted on it: its speech and its noise each through the
    effect (a linear one), the speech's active level over the noise's mean power."""
    name, _, noisy_path, clean_path = pair
    clean, rate = sf.read(clean_path)
    noisy, _ = sf.read(noisy_path)
    n = min(len(clean), len(noisy))
    noise_path = os.path.join(tmp, f"noise-{name}.wav")
    sf.write(noise_path, (noisy[:n] - clean[:n]).astype(np.float32), rate, subtype="FLOAT")
    speech = sf.read(sox(clean_path, effect, os.path.join(tmp, f"speech-{name}.wav")))[0]
    noise = sf.read(sox(noise_path, effect, os.path.join(tmp, f"echoed-noise-{name}.wav")))[0]
    return 10 * np.log10(active_power(speech, rate) / np.mean(noise ** 2))


def buzz(rng, n, rate, under_power):
    """Mains buzz at `under_power` mean power: a saturated sine, softened, off the nominal line."""
    t = np.arange(n) / rate
    f0 = rng.choice([50.0, 60.0]) + rng.uniform(-0.1, 0.1)
    y = np.convolve(np.tanh(4 * np.sin(2 * np.pi * f0 * t)), np.ones(8) / 8, "same")
    return y * np.sqrt(under_power / np.mean(y ** 2))


def level_beside_buzz(earshot, pairs, tmp, pool):
    """How far the speech level moves when a buzz is added to a clean file."""
    rng = np.random.default_rng(7)
    paths = []
    for i, p in enumerate(pairs[::3]):
        x, rate = sf.read(p[3])
        x = x - x.mean()
        hummed = x + buzz(rng, len(x), rate, active_power(x, rate) * 10 ** (-rng.uniform(8, 20) / 10))
        for name, y in ((f"clean-{i}.wav", x), (f"buzz-{i}.wav", hummed)):
            sf.write(os.path.join(tmp, name), y.astype(np.float32), rate, subtype="FLOAT")
        paths += [os.path.join(tmp, f"clean-{i}.wav"), os.path.join(tmp, f"buzz-{i}.wav")]
    levels = [r["metrics"]["speechLevelDBFS"] for r in pool.map(lambda p: check(earshot, p), paths)]
    moved = np.array(levels[1::2]) - np.array(levels[0::2])
    print(f"\nspeech level with a buzz less without it, {len(moved)} clean files: median {np.median(moved):.2f} dB, "
          f"mean distance {np.mean(np.abs(moved)):.2f} dB, within 0.2 dB {np.sum(np.abs(moved) <= 0.2)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--data", default="../shared/data")
    args = parser.parse_args()
    if shutil.which("sox") is None:
        sys.exit("sox_faults needs SoX (Debian: sox; `make deps` installs it)")
    pairs = list(mssnsd_pairs(args.data))
    if not pairs:
        print(f"(no MS-SNSD pairs under {args.data}/noisy_speech/mssnsd: sox_faults is skipped)")
        return
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        print(f"\n## Faults made by SoX on MS-SNSD speech ({len(pairs)} files each)\n")
        print("| fault | should read | found so | narrowband | muffled | other findings |")
        print("|---|---|---|---|---|---|")
        for i, (name, (effect, expected)) in enumerate(CHANNELS.items()):
            paths = [sox(p[3], effect, os.path.join(tmp, f"{i}-{p[0]}.wav")) for p in pairs]
            kinds = Counter(k for r in pool.map(lambda p: check(args.earshot, p), paths) for k in {q["kind"] for q in r["problems"]})
            others = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()) if k not in ("narrowband", "muffled")) or "none"
            print(f"| {name} | {expected} | {kinds[expected]}/{len(paths)} | {kinds['narrowband']} | {kinds['muffled']} | {others} |")
        print("\n| noisy pairs | echo found | noisy (< 20 dB) found | SNR median error dB | mean |")
        print("|---|---|---|---|---|")
        for name, effect in (("as they are", None), ("with an echo 250 ms late", ECHO)):
            paths = [p[2] if effect is None else sox(p[2], effect, os.path.join(tmp, f"echo-{p[0]}.wav")) for p in pairs]
            truths = [p[1] if effect is None else echoed_snr(p, effect, tmp) for p in pairs]
            reports = list(pool.map(lambda p: check(args.earshot, p), paths))
            e = np.array([abs(r["metrics"]["snrDB"] - t) for r, t in zip(reports, truths)])
            echoes = sum(any(q["kind"] == "echo" for q in r["problems"]) for r in reports)
            noisy = sum(r["metrics"]["snrDB"] < 20 for r, t in zip(reports, truths) if t < 20)
            print(f"| {name} | {echoes}/{len(paths)} | {noisy}/{sum(t < 20 for t in truths)} | {np.median(e):.2f} | {np.mean(e):.2f} |")
        level_beside_buzz(args.earshot, pairs, tmp, pool)


if __name__ == "__main__":
    main()

"""The sound check's SNR against the truth, per noise kind, at 0–30 dB, beside WADA-SNR.

Two families, as `build_set.py` splits them: the tuning noises with LibriSpeech training
speakers, and the held-out noise kinds (dogs, engines, jackhammers, gun shots, street music,
household sounds and cries, babble) with the development speakers. A third to tune on, with the
tuning family's speakers and room tones: knocks and bangs of no real recording, the pause
detector's own generator, whose power sits in a few frames. Speech at −28…−18 dBFS
active level over a real room tone 30–45 dB down, then the noise at a uniform 0–30 dB SNR
(active speech level over the noise's mean power). Seeded; written to a temporary folder.

Then material mixed by others: the 60 MS-SNSD pairs of `noisy_speech/mssnsd/` (speakers outside
LibriSpeech, real recorded noise of kinds none of the above holds: doors, typing, chairs,
neighbours talking, cafés, traffic). The truth is the clean file's active level over the mean power
of the noisy file less the clean one. Their clean files are checked too (some carry room noise of
their own, and digital silence spliced between sentences).

    .venv/bin/python eval/soundcheck/snr.py --earshot .build/release/earshot --data ../shared/data
"""
import argparse
import glob
import os
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import soundfile as sf

from training import realaudio
from eval.soundcheck.build_set import Noises, active_power, set_level
from eval.soundcheck.evaluate import check, wada_snr
from training.train_pauses import bangs

R = realaudio.RATE


def bursts(rng, n):
    """Knocks and bangs of no real recording (the pause detector's training generator): noise
    whose power sits in a few frames, to tune on."""
    return "bangs", realaudio.segment(rng, bangs(rng, n // R + 2), n)


def items(data, split, family, count, seed):
    bank = realaudio.Bank(data, split)
    tones = Noises(data, "tuning" if family == "bursts" else family, bank)
    draw = bursts if family == "bursts" else tones.draw
    rng = np.random.default_rng(seed)
    for _ in range(count):
        x = bank.speech[int(rng.integers(len(bank.speech)))]
        if len(x) > 12 * R:
            start = int(rng.integers(0, len(x) - 12 * R))
            x = x[start: start + 12 * R]
        x = set_level(x - x.mean(), rng.uniform(-28, -18))
        _, tone = tones.draw(rng, len(x))
        x = x + tone * np.sqrt(active_power(x) * 10 ** (-rng.uniform(30, 45) / 10) / (np.mean(tone ** 2) + 1e-20))
        snr = rng.uniform(0, 30)
        kind, noise = draw(rng, len(x))
        noise = noise * np.sqrt(active_power(x) / (np.mean(noise ** 2) + 1e-20) * 10 ** (-snr / 10))
        yield kind, snr, x + noise


def mssnsd_pairs(data):
    """(name, true SNR, noisy path, clean path) for each MS-SNSD pair."""
    root = os.path.join(data, "noisy_speech", "mssnsd")
    for clean_path in sorted(glob.glob(os.path.join(root, "clean", "*.flac"))):
        noisy_path = os.path.join(root, "noisy", os.path.basename(clean_path))
        clean, _ = sf.read(clean_path)
        noisy, _ = sf.read(noisy_path)
        n = min(len(clean), len(noisy))
        snr = 10 * np.log10(active_power(clean[:n]) / np.mean((noisy[:n] - clean[:n]) ** 2))
        yield os.path.basename(clean_path), snr, noisy_path, clean_path


def table_row(name, truths, estimates, wada):
    """One row: error of Earshot's and WADA-SNR's estimate; a missing estimate counts 40 dB off."""
    e = np.array([40 if est is None else abs(est - t) for t, est in zip(truths, estimates)])
    w = np.array([abs(x - t) for t, x in zip(truths, wada)])
    noisy = [est is not None and est < 20 for est in estimates]
    truth = [t < 20 for t in truths]
    found = sum(n and t for n, t in zip(noisy, truth))
    false = sum(n and not t for n, t in zip(noisy, truth))
    print(f"| {name} | {len(e)} | {np.median(e):.2f} | {np.mean(e):.2f} | {np.percentile(e, 90):.2f} | "
          f"{np.median(w):.2f} | {np.mean(w):.2f} | {found}/{sum(truth)} | {false}/{len(truth) - sum(truth)} |")


HEADER = ("| noise | items | Earshot median error dB | mean | 90th percentile | WADA-SNR median | mean | "
          "noisy (< 20 dB) found | called noisy at ≥ 20 dB |\n|---|---|---|---|---|---|---|---|---|")


def others(earshot, data):
    pairs = list(mssnsd_pairs(data))
    if not pairs:
        print(f"\n(no MS-SNSD pairs under {data}/noisy_speech/mssnsd: that table is skipped)")
        return
    with ThreadPoolExecutor(2) as pool:
        noisy = list(pool.map(lambda p: check(earshot, p[2]), pairs))
        clean = list(pool.map(lambda p: check(earshot, p[3]), pairs))
    print(f"\n## SNR of real noisy speech mixed by others (MS-SNSD, {len(pairs)} pairs, 0–19 dB)\n")
    print(HEADER)
    table_row("**all**", [p[1] for p in pairs], [r["metrics"]["snrDB"] for r in noisy],
              [wada_snr(sf.read(p[2])[0]) for p in pairs])
    good = sum(r["verdict"] == "good" for r in clean)
    found = Counter(p["kind"] for r in clean for p in r["problems"])
    print(f"\ntheir clean files judged good: {good}/{len(clean)}; problems reported on them: "
          + (", ".join(f"{k} {n}" for k, n in sorted(found.items())) or "none"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--items", type=int, default=210, help="per family")
    parser.add_argument("--family", choices=["tuning", "bursts", "held-out", "others", "all"], default="all",
                        help="all: the three families and the pairs mixed by others")
    args = parser.parse_args()
    for split, family, seed in (("train", "tuning", 5), ("train", "bursts", 7), ("dev", "held-out", 6)):
        if args.family not in (family, "all"):
            continue
        with tempfile.TemporaryDirectory() as folder:
            rows = []
            for i, (kind, snr, x) in enumerate(items(args.data, split, family, args.items, seed)):
                path = os.path.join(folder, f"{i:04d}.wav")
                sf.write(path, x.astype(np.float32), R, subtype="FLOAT")
                rows.append((kind, snr, path, wada_snr(x)))
            with ThreadPoolExecutor(2) as pool:
                reports = list(pool.map(lambda r: check(args.earshot, r[2]), rows))
        print(f"\n## SNR at 0–30 dB, {family} noises, {split} speakers ({len(rows)} recordings)\n")
        print(HEADER)
        for kind in sorted({r[0] for r in rows}) + ["all"]:
            mine = [(r, rep) for r, rep in zip(rows, reports) if kind in ("all", r[0])]
            table_row(f"**{kind}**" if kind == "all" else kind, [r[1] for r, _ in mine],
                      [rep["metrics"]["snrDB"] for _, rep in mine], [r[3] for r, _ in mine])

    if args.family in ("others", "all"):
        others(args.earshot, args.data)


if __name__ == "__main__":
    main()

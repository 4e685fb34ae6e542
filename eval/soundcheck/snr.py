"""The sound check's SNR against the truth, per noise kind, at 0–30 dB, beside WADA-SNR.

Two families, as `build_set.py` splits them: the tuning noises with LibriSpeech training
speakers, and the held-out noise kinds (dogs, engines, jackhammers, gun shots, street music,
household sounds and cries, babble) with the development speakers. Speech at −28…−18 dBFS
active level over a real room tone 30–45 dB down, then the noise at a uniform 0–30 dB SNR
(active speech level over the noise's mean power). Seeded; written to a temporary folder.

    .venv/bin/python eval/soundcheck/snr.py --earshot .build/release/earshot --data ../shared/data
"""
import argparse
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import soundfile as sf

from training import realaudio
from eval.soundcheck.build_set import Noises, active_power, set_level
from eval.soundcheck.evaluate import check, wada_snr

R = realaudio.RATE


def items(data, split, family, count, seed):
    bank = realaudio.Bank(data, split)
    noises = Noises(data, family, bank)
    rng = np.random.default_rng(seed)
    for _ in range(count):
        x = bank.speech[int(rng.integers(len(bank.speech)))]
        if len(x) > 12 * R:
            start = int(rng.integers(0, len(x) - 12 * R))
            x = x[start: start + 12 * R]
        x = set_level(x - x.mean(), rng.uniform(-28, -18))
        _, tone = noises.draw(rng, len(x))
        x = x + tone * np.sqrt(active_power(x) * 10 ** (-rng.uniform(30, 45) / 10) / (np.mean(tone ** 2) + 1e-20))
        snr = rng.uniform(0, 30)
        kind, noise = noises.draw(rng, len(x))
        noise = noise * np.sqrt(active_power(x) / (np.mean(noise ** 2) + 1e-20) * 10 ** (-snr / 10))
        yield kind, snr, x + noise


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--items", type=int, default=210, help="per family")
    parser.add_argument("--family", choices=["tuning", "held-out", "both"], default="both")
    args = parser.parse_args()
    for split, family, seed in (("train", "tuning", 5), ("dev", "held-out", 6)):
        if args.family not in (family, "both"):
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
        print("| noise | items | Earshot median error dB | mean | 90th percentile | WADA-SNR median | mean | "
              "noisy (< 20 dB) found | called noisy at ≥ 20 dB |")
        print("|---|---|---|---|---|---|---|---|---|")
        for kind in sorted({r[0] for r in rows}) + ["all"]:
            mine = [(r, rep) for r, rep in zip(rows, reports) if kind in ("all", r[0])]
            # A missing estimate counts 40 dB off.
            e = np.array([40 if rep["metrics"]["snrDB"] is None else abs(rep["metrics"]["snrDB"] - r[1]) for r, rep in mine])
            w = np.array([abs(r[3] - r[1]) for r, _ in mine])
            noisy = [rep["metrics"]["snrDB"] is not None and rep["metrics"]["snrDB"] < 20 for _, rep in mine]
            truth = [r[1] < 20 for r, _ in mine]
            found = sum(n and t for n, t in zip(noisy, truth))
            false = sum(n and not t for n, t in zip(noisy, truth))
            name = f"**{kind}**" if kind == "all" else kind
            print(f"| {name} | {len(e)} | {np.median(e):.2f} | {np.mean(e):.2f} | {np.percentile(e, 90):.2f} | "
                  f"{np.median(w):.2f} | {np.mean(w):.2f} | {found}/{sum(truth)} | {false}/{len(truth) - sum(truth)} |")


if __name__ == "__main__":
    main()

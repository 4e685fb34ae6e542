"""The sound check on a labelled set (eval/soundcheck/build_set.py), beside a simple rule-based
checker with ACX-style thresholds and WADA-SNR, in one table.

Per problem kind: precision, recall and F1 of `earshot soundcheck --format json`; macro-F1 over the
kinds; the share of clean recordings judged good (also of those whose untouched LibriSpeech source
WADA-SNR reads 20 dB or more: the labels take every source as clean); metric errors against the
faults' known sizes (SNR dB, RT60 s, bandwidth Hz, hum Hz). The peer checks what such a checker can: RMS −23…−18 dBFS,
peaks under −3 dBFS, samples at full scale, a noise floor under −60 dBFS, WADA-SNR at least 20 dB
(Kim & Stern 2008), and a DC offset over 0.01.

    .venv/bin/python eval/soundcheck/evaluate.py --earshot .build/release/earshot --set eval/data/soundcheck/dev
"""
import argparse
import glob
import json
import os
import re
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import soundfile as sf

from eval.soundcheck.build_set import KINDS


def wada_table():
    """G(SNR) = log E|x| − E log|x| for Gamma-shaped speech (α = 0.4) in Gaussian noise, seeded."""
    rng = np.random.default_rng(0)
    speech = rng.gamma(0.4, 1.0, 400_000) * rng.choice([-1, 1], 400_000)
    speech /= np.sqrt(np.mean(speech ** 2))
    noise = rng.standard_normal(400_000)
    snrs = np.arange(-20, 101, 1.0)
    g = []
    for s in snrs:
        x = np.abs(speech * 10 ** (s / 20) + noise)
        g.append(np.log(x.mean()) - np.log(x).mean())
    return snrs, np.array(g)


SNRS, G = wada_table()


def wada_snr(x):
    a = np.abs(x) / max(np.abs(x).max(), 1e-10)
    a = np.maximum(a, 1e-10)
    v = np.log(max(a.mean(), 1e-10)) - np.log(a).mean()
    # G falls monotonically with SNR... mostly: interpolate on the sorted pairs.
    order = np.argsort(G)
    return float(np.interp(v, G[order], SNRS[order]))


def peer(x):
    rms = 10 * np.log10(np.mean(x ** 2) + 1e-20)
    peak = 20 * np.log10(np.abs(x).max() + 1e-20)
    frames = (x[: len(x) // 800 * 800].reshape(-1, 800) ** 2).mean(axis=1)
    floor = 10 * np.log10(np.percentile(frames, 5) + 1e-20)  # ACX's noise floor: the quietest half-second stretches
    snr = wada_snr(x)
    problems = set()
    if rms < -23:
        problems.add("too_quiet")
    if rms > -18 or peak > -3:
        problems.add("too_loud")
    if np.sum(np.abs(x) >= 0.999 * np.abs(x).max()) >= 3 and peak > -0.1:
        problems.add("clipping")
    if floor > -60 or snr < 20:
        problems.add("noisy")
    if abs(np.mean(x)) > 0.01:
        problems.add("dc_offset")
    return problems, snr


def check(earshot, path):
    result = subprocess.run([earshot, "soundcheck", path, "--format", "json"], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"earshot soundcheck failed on {path}: {result.stderr.strip()}")
    return json.loads(result.stdout)


def hum_below(report):
    """How far under the speech the reported hum lies (dB), read from the hum finding's detail."""
    for p in report["problems"]:
        if p["kind"] == "hum":
            match = re.search(r"(-?[\d.]+) dB under speech", p["detail"])
            return float(match.group(1)) if match else None
    return None


def prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def sources(args, speakers):
    """Each speaker's untouched LibriSpeech recording, where it is found."""
    found = {speaker: glob.glob(os.path.join(args.data, "speech", "librispeech", f"{speaker}-*.flac"))
             for speaker in sorted(set(speakers))}
    return {speaker: paths[0] for speaker, paths in found.items() if paths}


def source_reports(args, speakers):
    """`earshot soundcheck` on each speaker's untouched LibriSpeech recording, where it is found."""
    paths = sources(args, speakers)
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(paths, pool.map(lambda p: check(args.earshot, p), paths.values())))


def inherited(items, reports, clean, own):
    """Which findings on clean items the untouched LibriSpeech recording draws too: the labels
    take every source as clean, and some carry their own hum, noise or squeezed peaks."""
    flagged = [i for i in clean if reports[i]["problems"]]
    same = [i for i in flagged if items[i]["speaker"] in own
            and {p["kind"] for p in reports[i]["problems"]} <= {p["kind"] for p in own[items[i]["speaker"]]["problems"]}]
    kinds = Counter(p["kind"] for i in same for p in reports[i]["problems"])
    print(f"of the {len(flagged)} clean recordings judged otherwise, {len(same)} carry the finding in their untouched "
          "LibriSpeech source too (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + "); "
          f"clean judged good, those left out: {len(clean) - len(flagged)}/{len(clean) - len(same)} = "
          f"{(len(clean) - len(flagged)) / max(1, len(clean) - len(same)):.1%}")


def clean_by_wada(args, items, reports, clean, line=20.0):
    """Clean items whose untouched LibriSpeech source WADA-SNR reads at `line` dB or more (the
    peer's estimator, which shares nothing with the sound check) and how many are judged good:
    the labels take every source as clean, and a source WADA-SNR reads as noisy is not."""
    wada = {}
    for speaker, path in sources(args, [items[i]["speaker"] for i in clean]).items():
        x = sf.read(path, dtype="float64")[0]
        wada[speaker] = wada_snr(x - x.mean())
    if not wada:
        return
    screened = [i for i in clean if wada.get(items[i]["speaker"], 0) >= line]
    good = sum(reports[i]["verdict"] == "good" for i in screened)
    kinds = Counter(p["kind"] for i in screened for p in reports[i]["problems"])
    print(f"clean recordings whose untouched source WADA-SNR reads {line:.0f} dB or more: {len(screened)} of {len(clean)}; "
          f"judged good {good}/{len(screened)} = {good / max(1, len(screened)):.1%}"
          + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")" if kinds else ""))


def false_findings_of_sources(items, reports, own):
    """Per kind, the findings the labels call false (on any item) that the item's untouched
    LibriSpeech recording draws too, and the precision with those left out."""
    print("\n| problem | false findings | of them, the source's own too | precision | with those left out |")
    print("|---|---|---|---|---|")
    for kind in KINDS:
        found = [i for i, r in enumerate(reports) if any(p["kind"] == kind for p in r["problems"])]
        false = [i for i in found if kind not in items[i]["problems"]]
        if not false:
            continue
        carried = [i for i in false if any(p["kind"] == kind for p in own.get(items[i]["speaker"], {}).get("problems", []))]
        tp = len(found) - len(false)
        print(f"| {kind} | {len(false)} | {len(carried)} | {tp / len(found):.2f} | {tp / max(1, len(found) - len(carried)):.2f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--set", required=True)
    parser.add_argument("--dump", help="write every item's report and labels here (JSON)")
    parser.add_argument("--data", default="../shared/data",
                        help="where the LibriSpeech sources are, to check the untouched source of an item with a finding its labels lack")
    args = parser.parse_args()
    meta = json.load(open(os.path.join(args.set, "items.json")))
    items = meta["items"]
    for it in items:  # sets built before problem kinds were written in snake_case
        it["problems"] = [k.replace("-", "_") for k in it["problems"]]
    paths = [os.path.join(args.set, it["file"]) for it in items]
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda p: check(args.earshot, p), paths))
    peers = [peer(sf.read(p, dtype="float64")[0]) for p in paths]

    print(f"\n## Sound check: {len(items)} recordings of {meta['split']} speakers, {meta.get('noises', 'tuning')} noises, "
          f"{meta.get('rooms', 'generated')} rooms ({args.set})\n")
    print("| problem | items | Earshot P | R | F1 | ACX rules + WADA P | R | F1 |")
    print("|---|---|---|---|---|---|---|---|")
    f1s, peer_f1s = [], []
    for kind in KINDS:
        truth = [kind in it["problems"] for it in items]
        mine = [any(p["kind"] == kind for p in r["problems"]) for r in reports]
        theirs = [kind in p[0] for p in peers]
        row = []
        for guess in (mine, theirs):
            tp = sum(t and g for t, g in zip(truth, guess))
            fp = sum(g and not t for t, g in zip(truth, guess))
            fn = sum(t and not g for t, g in zip(truth, guess))
            row.append(prf(tp, fp, fn))
        f1s.append(row[0][2])
        peer_f1s.append(row[1][2])
        print(f"| {kind} | {sum(truth)} | " + " | ".join(f"{v:.2f}" for v in row[0]) + " | " + " | ".join(f"{v:.2f}" for v in row[1]) + " |")
    print(f"| **macro-F1** | | | | **{np.mean(f1s):.3f}** | | | **{np.mean(peer_f1s):.3f}** |")

    clean = [i for i, it in enumerate(items) if not it["problems"]]
    good = sum(reports[i]["verdict"] == "good" for i in clean)
    peer_good = sum(not peers[i][0] for i in clean)
    print(f"\nclean recordings judged good: Earshot {good}/{len(clean)} = {good / max(1, len(clean)):.1%}, "
          f"rules {peer_good}/{len(clean)} = {peer_good / max(1, len(clean)):.1%}")
    falsely = Counter(p["kind"] for i in clean for p in reports[i]["problems"])
    if falsely:
        print("problems reported on clean recordings: " + ", ".join(f"{k} {v}" for k, v in sorted(falsely.items())))
    own = source_reports(args, [it["speaker"] for i, it in enumerate(items)
                                if any(p["kind"] not in it["problems"] for p in reports[i]["problems"])])
    if own:
        if falsely:
            inherited(items, reports, clean, own)
            clean_by_wada(args, items, reports, clean)
        false_findings_of_sources(items, reports, own)

    def errors(key, metric, pick=lambda it: True):
        rows = [(it["truth"][key], reports[i]["metrics"][metric], i) for i, it in enumerate(items) if key in it["truth"] and pick(it)]
        measured = [(t, m) for t, m, _ in rows if m is not None]
        e = np.abs([m - t for t, m in measured]) if measured else np.array([np.nan])
        return rows, measured, e

    print("\n| metric | items | median error | mean error | 90th percentile | not measured |")
    print("|---|---|---|---|---|---|")
    rows, measured, e = errors("snr", "snrDB")
    print(f"| SNR, Earshot (dB) | {len(rows)} | {np.median(e):.2f} | {np.mean(e):.2f} | {np.percentile(e, 90):.2f} | {len(rows) - len(measured)} |")
    pe = np.abs([peers[i][1] - t for t, _, i in rows]) if rows else np.array([np.nan])
    print(f"| SNR, WADA-SNR (dB) | {len(rows)} | {np.median(pe):.2f} | {np.mean(pe):.2f} | {np.percentile(pe, 90):.2f} | 0 |")
    # A missing estimate counts 40 dB off.
    snr_rows = [(it["truth"]["snr"], reports[i]["metrics"]["snrDB"], it["truth"].get("noise", "?")) for i, it in enumerate(items) if "snr" in it["truth"]]
    print("\n| noise (SNR 0–17 dB) | items | median error dB | mean | 90th percentile | noisy found |")
    print("|---|---|---|---|---|---|")
    for kind in sorted({k for _, _, k in snr_rows}):
        e = np.array([40 if m is None else abs(m - t) for t, m, k in snr_rows if k == kind])
        found = sum(m is not None and m < 20 for t, m, k in snr_rows if k == kind)
        print(f"| {kind} | {len(e)} | {np.median(e):.2f} | {np.mean(e):.2f} | {np.percentile(e, 90):.2f} | {found}/{len(e)} |")
    print()
    rows, measured, e = errors("rt60", "rt60Seconds")
    print(f"| RT60 (s) | {len(rows)} | {np.median(e):.3f} | {np.mean(e):.3f} | {np.percentile(e, 90):.3f} | {len(rows) - len(measured)} |")
    rows, measured, e = errors("bandwidth", "bandwidthHz")
    print(f"| bandwidth, narrowband (Hz) | {len(rows)} | {np.median(e):.0f} | {np.mean(e):.0f} | {np.percentile(e, 90):.0f} | 0 |")
    # LibriSpeech is 16 kHz: a clean item's band ends at 8 kHz, whatever rate it was written at.
    full = [reports[i]["metrics"]["bandwidthHz"] for i in clean]
    fe = np.abs(np.array(full) - meta["rate"] / 2)
    print(f"| bandwidth, clean (Hz; truth {meta['rate'] // 2}) | {len(full)} | {np.median(fe):.0f} | {np.mean(fe):.0f} | {np.percentile(fe, 90):.0f} | 0 |")
    hums = [(it["truth"]["hum"], reports[i]["metrics"]["humHz"]) for i, it in enumerate(items) if "hum" in it["truth"]]
    print(f"| hum frequency right | {len(hums)} | {sum(t == m for t, m in hums)}/{len(hums)} | | | {sum(m is None for _, m in hums)} |")
    # The hum's level under the speech, as the hum finding's detail gives it.
    below = [(it["truth"]["humBelowDB"], hum_below(reports[i])) for i, it in enumerate(items) if "humBelowDB" in it["truth"]]
    he = np.abs([m - t for t, m in below if m is not None]) if any(m is not None for _, m in below) else np.array([np.nan])
    print(f"| hum level under speech (dB) | {len(below)} | {np.median(he):.2f} | {np.mean(he):.2f} | {np.percentile(he, 90):.2f} | {sum(m is None for _, m in below)} |")
    if args.dump:
        with open(args.dump, "w") as f:
            json.dump([{"item": it, "report": r, "peer": sorted(p[0]), "wada": p[1]} for it, r, p in zip(items, reports, peers)], f, indent=1)


if __name__ == "__main__":
    main()

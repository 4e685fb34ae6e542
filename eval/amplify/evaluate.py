"""Amplification for hearing loss, scored with HASPI and HASQI (pyclarity), against the Clarity baseline.

Listeners: the Bisgaard et al. (2010) standard audiograms N1–N4 and S1–S3, the same in both ears
(so the better ear is either ear, and one ear is scored). Speech: LibriSpeech read speech from the
development speakers only (training/realaudio.py: never heard by any Earshot model), 3 s per item,
at 55, 65 and 75 dB SPL, in quiet and in real noise (the development part of the background
recordings) at +5 and +15 dB SNR; `--per-cell` items per listener, level and condition (seeded).
Calibration: a full-scale sine is 100 dB SPL (Earshot's default), so RMS 1 is 103 dB SPL, the
`level1` the metrics get.

Systems:
  unprocessed        the noisy speech as it arrives;
  Clarity baseline   pyclarity's NAL-R FIR (220 taps) and compressor with the CEC2 baseline's
                     settings, then its tanh soft clip;
  Earshot WDRC       `earshot amplify --audiogram A --max-output-dbspl M` (no noise reduction);
  Earshot NR + WDRC  `earshot listen IN -o OUT --audiogram A --max-output-dbspl M --max-output-dbfs 0`:
                     the whole listening chain, alert detector, noise suppressor and
                     amplification, with the same ceiling as `amplify` (listen's own default is
                     −6 dBFS).
M is 110 dB SPL by default, above what the uncalibrated playback can play (full scale is 100 dB
SPL): the output is then limited just under full scale, and every output is checked for a
sample over the ceiling and for runs of samples at one level near it (a cut waveform).
HASPI's reference is the clean speech at its presented level; HASQI's is the clean speech through
the same NAL-R FIR (as Clarity scores quality: against NAL-R-amplified clean speech). The goals,
for each Earshot system against the baseline: HASPI at least 0.05 higher, HASQI no lower.

    .venv/bin/python eval/amplify/evaluate.py --earshot .build/release/earshot --data ../shared/data

Held out: `--pairs ../shared/data/noisy_speech/mssnsd` judges on the MS-SNSD pairs (other
speakers, real noise mixed by others at 0–15 dB), at 65 dB SPL; with `--pairs-scenes` in the
layout above instead, each scene's clean take in quiet and its mix in noise, at 55/65/75 dB SPL.
"""
import argparse
import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import soundfile as sf

from training import realaudio
from eval.amplify.bisgaard import AUDIOGRAMS as BISGAARD, FREQUENCIES

RATE = realaudio.RATE
LEVELS = [55, 65, 75]
CONDITIONS = [("quiet", None), ("+15 dB", 15), ("+5 dB", 5)]
LEVEL1 = 100 + 10 * np.log10(2)  # dB SPL of RMS 1 when a full-scale sine is 100 dB SPL
SECONDS = 3.0
SYSTEMS = ["unprocessed", "Clarity baseline", "Earshot WDRC", "Earshot NR + WDRC"]


def build_items(data, out, per_cell, seed):
    path = os.path.join(out, "items.json")
    if os.path.exists(path):
        with open(path) as f:
            items = json.load(f)
        if len(items) == len(BISGAARD) * len(LEVELS) * len(CONDITIONS) * per_cell:
            return items
    bank = realaudio.Bank(data, "dev")
    if not bank:
        sys.exit(f"no development speech or noise under {data}")
    rng = np.random.default_rng(seed)
    n = int(SECONDS * RATE)
    items = []
    os.makedirs(os.path.join(out, "audio"), exist_ok=True)
    for listener in BISGAARD:
        for level in LEVELS:
            for condition, snr in CONDITIONS:
                for k in range(per_cell):
                    speech = bank.speech[int(rng.integers(len(bank.speech)))]
                    # The 3 s with the most speech in them (read speech has few pauses).
                    starts = np.arange(0, max(1, len(speech) - n), RATE // 4)
                    energy = [np.sum(speech[s:s + n] ** 2) for s in starts]
                    start = int(starts[int(np.argmax(energy))]) if rng.random() < 0.5 else int(rng.choice(starts))
                    clean = np.pad(speech[start:start + n], (0, max(0, n - len(speech[start:start + n]))))
                    clean = clean * 10 ** ((level - LEVEL1) / 20) / realaudio.rms(clean)
                    mix = clean.copy()
                    if snr is not None:
                        noise = bank.noise[int(rng.integers(len(bank.noise)))]
                        at = int(rng.integers(0, len(noise) - n))
                        noise = noise[at:at + n]
                        mix = clean + noise * realaudio.rms(clean) / realaudio.rms(noise) * 10 ** (-snr / 20)
                    name = f"{listener}-{level}-{condition.replace(' ', '').replace('+', 'p')}-{k}"
                    sf.write(os.path.join(out, "audio", name + "-clean.wav"), clean.astype(np.float32), RATE, subtype="FLOAT")
                    sf.write(os.path.join(out, "audio", name + "-mix.wav"), mix.astype(np.float32), RATE, subtype="FLOAT")
                    items.append({"name": name, "listener": listener, "level": level, "condition": condition, "k": k})
    with open(path, "w") as f:
        json.dump(items, f, indent=1)
    return items


def pair_rows(pairs):
    import csv
    with open(os.path.join(pairs, "pairs.tsv")) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_pair(pairs, row, seconds):
    n = int(seconds * RATE)
    clean, rate = sf.read(os.path.join(pairs, "clean", row["name"] + ".flac"), dtype="float64")
    mix, _ = sf.read(os.path.join(pairs, "noisy", row["name"] + ".flac"), dtype="float64")
    assert rate == RATE
    return clean[:n], mix[:n]


def snr_band(row):
    snr = float(row["snr_db"])
    return "0–5 dB" if snr < 5 else "5–10 dB" if snr < 10 else "10–15 dB"


def write_item(out, name, clean, mix, gain):
    sf.write(os.path.join(out, "audio", name + "-clean.wav"), (clean * gain).astype(np.float32), RATE, subtype="FLOAT")
    sf.write(os.path.join(out, "audio", name + "-mix.wav"), (mix * gain).astype(np.float32), RATE, subtype="FLOAT")


def build_pair_items(pairs, out, count, seconds):
    """Held-out material of another kind: the MS-SNSD pairs someone else mixed from real recorded
    noise (Freesound, DEMAND) at 0–15 dB, on speakers outside LibriSpeech, never trained or tuned
    on. Every `len(pairs) // count`-th pair, its first `seconds` (long enough for a hearing aid's
    slow noise reduction to engage), the clean speech at 65 dB SPL and the mix by the same gain."""
    rows = pair_rows(pairs)
    rows = rows[::max(1, len(rows) // count)][:count]
    os.makedirs(os.path.join(out, "audio"), exist_ok=True)
    items = []
    for row in rows:
        clean, mix = read_pair(pairs, row, seconds)
        gain = 10 ** ((65 - LEVEL1) / 20) / realaudio.rms(clean)
        for listener in BISGAARD:
            name = f"{listener}-{row['name']}"
            write_item(out, name, clean, mix, gain)
            items.append({"name": name, "listener": listener, "level": 65, "condition": snr_band(row), "k": 0})
    return items


def build_pair_scenes(pairs, out, per_cell, seconds, seed):
    """The MS-SNSD pairs in the layout of a listening panel's scenes: every listener at 55, 65 and
    75 dB SPL, in quiet (the clean take) and in its real noise (the mix, at the SNR it was mixed
    at), `per_cell` scenes each, every scene a pair drawn in turn from one seeded shuffle, so each
    pair is heard by other listeners at other levels."""
    rows = pair_rows(pairs)
    order = np.random.default_rng(seed).permutation(len(rows))
    os.makedirs(os.path.join(out, "audio"), exist_ok=True)
    items, drawn = [], 0
    for listener in BISGAARD:
        for level in LEVELS:
            for quiet in (True, False):
                for k in range(per_cell):
                    row = rows[int(order[drawn % len(rows)])]
                    drawn += 1
                    clean, mix = read_pair(pairs, row, seconds)
                    gain = 10 ** ((level - LEVEL1) / 20) / realaudio.rms(clean)
                    condition = "quiet" if quiet else "noise"
                    name = f"{listener}-{level}-{condition}-{row['name']}"
                    write_item(out, name, clean, clean if quiet else mix, gain)
                    items.append({"name": name, "listener": listener, "level": level, "condition": condition, "k": k})
    return items


def audiogram(listener):
    from clarity.utils.audiogram import Audiogram
    return Audiogram(levels=np.array(BISGAARD[listener], dtype=float), frequencies=np.array(FREQUENCIES, dtype=float))


def nal_r(signal, listener):
    from clarity.enhancer.nalr import NALR
    enhancer = NALR(nfir=220, sample_rate=RATE)
    fir, _ = enhancer.build(audiogram(listener))
    return enhancer.apply(fir, signal)[110:110 + len(signal)]  # the linear-phase FIR's delay taken out


def clarity_baseline(mix, listener):
    from clarity.enhancer.compressor import Compressor
    compressor = Compressor(fs=RATE, threshold=0.35, attenuation=0.1, attack=50, release=1000, rms_buffer_size=0.064)
    out, _, _ = compressor.process(nal_r(mix, listener))
    return np.tanh(out)


def earshot(args, command, mix_path, listener_file, out_path):
    full = [args.earshot] + command[:1] + [mix_path, "-o", out_path, "--audiogram", listener_file] + command[1:]
    result = subprocess.run(full, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(full)} failed: {result.stderr.strip()}")
    x, rate = sf.read(out_path, dtype="float64", always_2d=True)
    assert rate == RATE and x.shape[1] == 2
    return x[:, 0]  # left ear; the audiograms are symmetric


def flat_runs(x, level):
    """Runs of three or more samples at one value at or above `level`: a cut waveform."""
    top = (np.abs(x[2:]) >= level) & (x[2:] == x[1:-1]) & (x[1:-1] == x[:-2])
    return int(np.sum(top[1:] & ~top[:-1]) + (1 if len(top) and top[0] else 0))


def score(job):
    """(HASPI, HASQI) of one processed signal."""
    from clarity.evaluator.haspi import haspi_v2
    from clarity.evaluator.hasqi import hasqi_v2
    clean, nal_r_clean, processed, listener = job
    np.random.seed(0)
    haspi, _ = haspi_v2(clean, RATE, processed, RATE, audiogram(listener), LEVEL1)
    np.random.seed(0)
    hasqi = hasqi_v2(nal_r_clean, RATE, processed, RATE, audiogram(listener), LEVEL1)[0]
    return float(haspi), float(hasqi)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="eval/data/amplify")
    parser.add_argument("--per-cell", type=int, default=2)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--listeners", default=",".join(BISGAARD))
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--quick", action="store_true", help="only the first item of each cell (for tuning)")
    parser.add_argument("--max-output-dbspl", type=float, default=110.0, help="the fitting's maximum output (default 110)")
    parser.add_argument("--amplify-args", default="", help="more arguments for `earshot amplify` (to tune the compressor)")
    parser.add_argument("--listen-args", default="", help="more arguments for `earshot listen` (to tune the chain)")
    parser.add_argument("--pairs", help="judge on these clean/noisy pairs instead (noisy_speech/mssnsd: held out, never tuned on)")
    parser.add_argument("--pairs-count", type=int, default=8, help="how many of the pairs")
    parser.add_argument("--pairs-seconds", type=float, default=8.0, help="how much of each pair")
    parser.add_argument("--pairs-scenes", action="store_true",
                        help="the pairs as scenes at 55/65/75 dB SPL in quiet and noise, --per-cell each (seed --seed)")
    args = parser.parse_args()
    if args.pairs_scenes and not args.pairs:
        sys.exit("--pairs-scenes needs --pairs")
    if args.per_cell < 1 or args.pairs_count < 1 or not args.pairs_seconds > 0:
        sys.exit("--per-cell and --pairs-count must be at least 1, --pairs-seconds more than 0")
    if args.pairs and not os.path.exists(os.path.join(args.pairs, "pairs.tsv")):
        sys.exit(f"skipped: no pairs.tsv under {args.pairs} (see ../shared/data/SOURCES.md)")
    if not args.pairs and not os.path.isdir(os.path.join(args.data, "speech", "librispeech")):
        sys.exit(f"skipped: no LibriSpeech under {args.data}/speech/librispeech (see ../shared/data/SOURCES.md)")
    os.makedirs(args.out, exist_ok=True)
    if args.pairs_scenes:
        items = build_pair_scenes(args.pairs, args.out, args.per_cell, args.pairs_seconds, args.seed)
    elif args.pairs:
        items = build_pair_items(args.pairs, args.out, args.pairs_count, args.pairs_seconds)
    else:
        items = build_items(args.data, args.out, args.per_cell, args.seed)
    listeners = args.listeners.split(",")
    systems = args.systems.split(",")
    items = [i for i in items if i["listener"] in listeners and not (args.quick and i["k"] > 0)]
    cache_path = os.path.join(args.out, "scores.json")
    cache = {}
    if os.path.exists(cache_path):
        try:
            with open(cache_path) as f:
                cache = json.load(f)
        except (OSError, ValueError):
            print(f"{cache_path} is unreadable: scoring everything again", file=sys.stderr)

    def save_cache():
        # Whole or not at all: a run stopped mid-write must not leave scores the next run cannot read.
        with open(cache_path + ".part", "w") as f:
            json.dump(cache, f)
        os.replace(cache_path + ".part", cache_path)

    work = tempfile.mkdtemp(prefix="earshot-amplify-")
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    for listener in listeners:
        with open(os.path.join(work, listener + ".json"), "w") as f:
            ear = {str(hz): level for hz, level in zip(FREQUENCIES, BISGAARD[listener])}
            json.dump({"left": ear, "right": ear}, f)
    ceiling = 10 ** (min(0.0, args.max_output_dbspl - 100) / 20)
    fitting = ["--max-output-dbspl", f"{args.max_output_dbspl:g}"]
    outputs, peaks, flat, jobs, keys = {}, {s: 0.0 for s in systems}, {s: 0 for s in systems}, [], []
    for item in items:
        audio = os.path.join(args.out, "audio", item["name"])
        clean = sf.read(audio + "-clean.wav", dtype="float64")[0]
        mix = sf.read(audio + "-mix.wav", dtype="float64")[0]
        nal_r_clean = nal_r(clean, item["listener"])
        listener_file = os.path.join(work, item["listener"] + ".json")
        for system in systems:
            if system == "unprocessed":
                processed = mix
            elif system == "Clarity baseline":
                processed = clarity_baseline(mix, item["listener"])
            elif system == "Earshot WDRC":
                processed = earshot(args, ["amplify", *fitting, *args.amplify_args.split()], audio + "-mix.wav", listener_file, os.path.join(work, "out.wav"))
            else:
                processed = earshot(args, ["listen", *fitting, "--max-output-dbfs", "0", *args.listen_args.split()],
                                    audio + "-mix.wav", listener_file, os.path.join(work, "out.wav"))
            if system.startswith("Earshot"):
                peaks[system] = max(peaks[system], float(np.max(np.abs(processed))))
                flat[system] += flat_runs(processed, 0.9 * ceiling)
            key = item["name"] + ":" + hashlib.sha1(processed.astype(np.float32).tobytes()).hexdigest()
            outputs[(item["name"], system)] = key
            if key not in cache and key not in keys:
                keys.append(key)
                jobs.append((clean, nal_r_clean, processed, item["listener"]))
    print(f"{len(items)} items × {len(systems)} systems; scoring {len(jobs)} new outputs on {args.jobs} processes", file=sys.stderr)
    with ProcessPoolExecutor(args.jobs) as pool:
        for done, (key, result) in enumerate(zip(keys, pool.map(score, jobs, chunksize=1))):
            cache[key] = result
            if done % 20 == 19:
                save_cache()
    save_cache()

    def mean(system, metric, **where):
        values = [cache[outputs[(i["name"], system)]][metric] for i in items if all(i[k] == v for k, v in where.items())]
        return float(np.mean(values))

    print(f"\n## Amplification: HASPI / HASQI (pyclarity), {len(items) // len(listeners)} items per listener, "
          + ("MS-SNSD pairs (held out)" if args.pairs else "LibriSpeech development speakers, real noise") + "\n")
    print("| listener | " + " | ".join(systems) + " |")
    print("| --- | " + " | ".join("---" for _ in systems) + " |")
    for listener in listeners + ["mean"]:
        where = {} if listener == "mean" else {"listener": listener}
        cells = [f"{mean(s, 0, **where):.3f} / {mean(s, 1, **where):.3f}" for s in systems]
        print(f"| {'**mean**' if listener == 'mean' else listener} | " + " | ".join(cells) + " |")
    levels = sorted({i["level"] for i in items})
    conditions = list(dict.fromkeys(i["condition"] for i in items))
    for field, values in (("level", levels), ("condition", conditions)):
        print(f"\n| {field} | " + " | ".join(systems) + " |")
        print("| --- | " + " | ".join("---" for _ in systems) + " |")
        for value in values:
            label = f"{value} dB SPL" if field == "level" else value
            print(f"| {label} | " + " | ".join(f"{mean(s, 0, **{field: value}):.3f} / {mean(s, 1, **{field: value}):.3f}" for s in systems) + " |")
    earshots = [s for s in systems if s.startswith("Earshot")]
    if "Clarity baseline" in systems and earshots:
        def against_baseline(field, values, label):
            print("\n| listener | " + " | ".join(f"{s}, {label(v)}" for s in earshots for v in values) + " |")
            print("| --- | " + " | ".join("---" for _ in earshots for _ in values) + " |")
            for listener in listeners:
                cells = []
                for system in earshots:
                    for value in values:
                        where = {"listener": listener, field: value}
                        cells.append(f"{mean(system, 0, **where) - mean('Clarity baseline', 0, **where):+.3f} / "
                                     f"{mean(system, 1, **where) - mean('Clarity baseline', 1, **where):+.3f}")
                print(f"| {listener} | " + " | ".join(cells) + " |")

        print("\n## Against the baseline, per listener and condition, then level: HASPI / HASQI difference")
        against_baseline("condition", conditions, str)
        if len(levels) > 1:
            against_baseline("level", levels, lambda v: f"{v} dB SPL")
        print()
        for system in earshots:
            haspi = mean(system, 0) - mean("Clarity baseline", 0)
            hasqi = mean(system, 1) - mean("Clarity baseline", 1)
            met = haspi >= 0.05 and hasqi >= 0
            print(f"{system} − Clarity baseline: HASPI {haspi:+.3f} (goal ≥ +0.05), HASQI {hasqi:+.3f} (goal ≥ 0): "
                  + ("met" if met else "not met"))
    failed = False
    for system in earshots:
        peak = 20 * np.log10(max(peaks[system], 1e-12)) + 100
        exceeded = peaks[system] > ceiling * (1 + 1e-6)
        print(f"{system}: loudest sample {peak:.1f} dB SPL (ceiling {20 * np.log10(ceiling) + 100:.1f}) "
              + ("EXCEEDED" if exceeded else "never exceeded") + f"; runs of samples at one level near it: {flat[system]}")
        failed |= exceeded or flat[system] > 0
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()

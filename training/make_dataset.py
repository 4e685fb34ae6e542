"""Generate the alert detector's training and validation scenes with `earshot synth scene`.

Seeds 100000+ train, 200000+ validate; the evaluation (eval/detect) uses 900000+ and the
evaluation rooms and speech takes, which training never hears.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys


def scene(earshot, data, folder, seed, duration, rate_per_minute, rooms):
    stem = os.path.join(folder, f"scene{seed}")
    if os.path.exists(stem + ".json"):
        return stem
    subprocess.run([earshot, "synth", "scene", "--seed", str(seed), "--duration", str(duration),
                    "--alerts-per-minute", str(rate_per_minute), "--data", data, "--rooms", rooms,
                    "-o", stem + ".wav", "--alert-track", stem + ".alerts.wav", "--labels", stem + ".json.tmp"],
                   check=True, stderr=subprocess.DEVNULL)
    os.replace(stem + ".json.tmp", stem + ".json")
    return stem


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--earshot", default=".build/release/earshot")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="training/data")
    parser.add_argument("--scenes", type=int, default=120, help="training scenes (validation: a sixth as many)")
    parser.add_argument("--duration", type=float, default=120)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    jobs = []
    for split, base, count in [("train", 100_000, args.scenes), ("valid", 200_000, max(4, args.scenes // 6))]:
        folder = os.path.join(args.out, split)
        os.makedirs(folder, exist_ok=True)
        for i in range(count):
            # A quarter of the scenes are nearly alert-free: hours of things that must not fire.
            rate = 0.5 if i % 4 == 3 else 8 + (i % 5) * 2
            jobs.append((args.earshot, args.data, folder, base + i, args.duration, rate, "training"))
    done = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for _ in pool.map(lambda j: scene(*j), jobs):
            done += 1
            print(f"\r{done}/{len(jobs)} scenes", end="", file=sys.stderr)
    print(file=sys.stderr)


if __name__ == "__main__":
    main()

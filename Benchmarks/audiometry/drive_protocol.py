"""`make bench-audiometry`: drive `earshot hearing-test run --protocol jsonl` with simulated
listeners written independently of Earshot's own simulator, and score every procedure.

A listener hears a tone in an ear with probability Φ((L − T)/σ); the other ear gets the tone
weakened by the interaural attenuation; if both ears hear it, the louder (above threshold)
ear is named; false alarms name a random ear; lapses miss audible tones.
"""
import argparse
import json
import math
import random
import statistics
import subprocess
import sys

FREQUENCIES = [250, 500, 1000, 2000, 3000, 4000, 6000, 8000]


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def make_listener(kind, rng, sigma_override=None):
    def audiogram(shape):
        return {f: min(100.0, max(-10.0, shape(f) + rng.gauss(0, 3))) for f in FREQUENCIES}

    fa, sigma, lapse = rng.uniform(0, 0.05), max(1.0, rng.gauss(3, 0.7)), 0.01
    if kind == "normal":
        base = rng.gauss(5, 4)
        left = audiogram(lambda f: base); right = audiogram(lambda f: base)
    elif kind == "sloping":
        base, slope = rng.gauss(15, 5), rng.gauss(15, 4)
        shape = lambda f: base + max(0.0, math.log2(f / 1000)) * slope
        left = audiogram(shape); right = audiogram(shape)
    elif kind == "flat":
        base = rng.gauss(45, 10)
        left = audiogram(lambda f: base); right = audiogram(lambda f: base)
    elif kind == "asymmetric":
        base, gap = rng.gauss(15, 5), rng.gauss(30, 8)
        better = audiogram(lambda f: base); worse = audiogram(lambda f: base + gap)
        left, right = (better, worse) if rng.random() < 0.5 else (worse, better)
    else:  # noisy responder
        base = rng.gauss(15, 8)
        left = audiogram(lambda f: base); right = audiogram(lambda f: base)
        fa, sigma, lapse = rng.uniform(0.2, 0.4), max(1.0, rng.gauss(5, 1)), 0.05
    if sigma_override is not None:
        sigma = sigma_override
    return {"left": left, "right": right, "fa": fa, "sigma": sigma, "lapse": lapse}


def answer(listener, stimulus, attenuation, rng):
    guess = rng.choice(["left", "right"])
    if stimulus["ear"] == "none":
        return guess if rng.random() < listener["fa"] else "none"
    ear, other = stimulus["ear"], "right" if stimulus["ear"] == "left" else "left"
    f, level = stimulus["frequencyHz"], stimulus["levelDBHL"]
    direct = level - listener[ear][f]
    crossed = level - attenuation - listener[other][f]
    hears_direct = rng.random() < phi(direct / listener["sigma"])
    hears_crossed = rng.random() < phi(crossed / listener["sigma"])
    if rng.random() < listener["lapse"]:
        return "none"
    if hears_direct and hears_crossed:
        return ear if direct >= crossed else other
    if hears_direct:
        return ear
    if hears_crossed:
        return other
    return guess if rng.random() < listener["fa"] else "none"


def run_test(earshot, procedure, listener, seed, attenuation, transducer):
    rng = random.Random(seed)
    process = subprocess.Popen(
        [earshot, "hearing-test", "run", "--protocol", "jsonl", "--procedure", procedure, "--seed", str(seed),
         "--transducer", transducer],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    stimuli = 0
    for line in process.stdout:
        message = json.loads(line)
        if message["type"] == "result":
            process.wait()
            return message, stimuli
        stimuli += 1
        reply = {"id": message["id"], "response": answer(listener, message, attenuation, rng)}
        process.stdin.write(json.dumps(reply) + "\n")
        process.stdin.flush()
    raise RuntimeError(f"earshot ended without a result (exit {process.wait()})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--listeners", type=int, default=20, help="listeners per kind")
    parser.add_argument("--sigma", type=float, help="psychometric spread for every listener (dB)")
    parser.add_argument("--transducer", default="supra-aural", choices=["supra-aural", "insert", "circumaural"])
    args = parser.parse_args()
    attenuation = 55 if args.transducer == "insert" else 40
    kinds = ["normal", "sloping", "flat", "asymmetric", "noisy"]
    print(f"Hearing test through the line protocol: {args.listeners} listeners per kind ({', '.join(kinds)}), "
          f"{args.transducer} ({attenuation} dB interaural attenuation), 8 frequencies × 2 ears"
          + (f", psychometric spread {args.sigma} dB" if args.sigma else "") + "\n")
    print(f"{'procedure':18} {'MAE dB':>7} {'±5 dB':>7} {'±10 dB':>7} {'tones':>7} {'stimuli':>8} "
          f"{'noisy flagged':>14} {'reliable flagged':>17}")
    baseline = None
    for procedure in ["hughson-westlake", "quick", "bayesian"]:
        errors, tones, stimuli_total = [], [], []
        noisy = noisy_flagged = reliable = reliable_flagged = 0
        for k, kind in enumerate(kinds):
            for n in range(args.listeners):
                seed = 1_000_000 + 1000 * k + n
                listener = make_listener(kind, random.Random(seed), args.sigma)
                result, stimuli = run_test(args.earshot, procedure, listener, seed, attenuation, args.transducer)
                tones.append(result["presentations"])
                stimuli_total.append(stimuli)
                flagged = bool(result["reliability"]["flags"])
                if kind == "noisy":
                    noisy += 1; noisy_flagged += flagged
                else:
                    reliable += 1; reliable_flagged += flagged
                for t in result["thresholds"]:
                    truth = listener[t["ear"]][int(t["frequencyHz"])]
                    found = t.get("thresholdDBHL")
                    errors.append(abs(found - truth) if found is not None else 999.0)
        mean_tones = statistics.mean(tones)
        baseline = baseline or mean_tones
        within = lambda d: 100 * sum(e <= d for e in errors) / len(errors)
        print(f"{procedure:18} {statistics.mean(e for e in errors if e < 999):7.2f} {within(5):6.1f}% {within(10):6.1f}% "
              f"{mean_tones:7.1f} {statistics.mean(stimuli_total):8.1f} {100 * noisy_flagged / noisy:13.0f}% "
              f"{100 * reliable_flagged / reliable:16.0f}%   ({100 * mean_tones / baseline:.0f} % of Hughson-Westlake's tones)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

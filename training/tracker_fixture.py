"""The tracker's parity fixture: `train.track`'s events for seeded decision streams under several
operating points (per-class smoothing, the sure threshold, the sustained route), which
`AlertEventTracker` must announce alike. The operating point is chosen with `train.track`,
so the two must agree.

    .venv/bin/python training/tracker_fixture.py [OUT.json]

Probabilities are multiples of 1/1024 and no threshold lies on a mean of them, so float32 and
float64 sums compare alike.
"""
import json
import os
import sys

import numpy as np

from training import train as tr

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "EarshotAlertsTests", "Fixtures",
                   "tracker_parity.json")
DECISIONS = 300
# (thresholds, smoothing (one, or one per class), minimum, sure, sustained)
CASES = [
    ([0.97, 0.93, 0.82, 0.89], 2, 0.2, 0.995, (20, [0.83, None, None, None])),
    ([0.99, 0.95, 0.82, 0.89], [1, 2, 2, 2], 0.2, 0.995, (20, [0.81, None, None, None])),
    ([0.91, 0.87, 0.77, 0.73], [3, 1, 1, 1], 0.2, None, None),
    ([0.87, 0.93, 0.71, 0.79], [2, 3, 2, 1], 0.1, 0.97, (10, [0.63, 0.73, None, None])),
    ([0.73, 0.77, 0.69, 0.81], 3, 0.3, None, (15, [None, None, 0.61, 0.67])),
]


def stream(rng):
    """Alert-free decisions with alerts of random classes swelling, holding and fading, some
    faint, some overlapping, some flickering."""
    logits = np.zeros((DECISIONS, 5))
    logits[:, 0] = 3 + 0.5 * rng.standard_normal(DECISIONS)
    for _ in range(int(rng.integers(4, 9))):
        k = int(rng.integers(1, 5))
        start, length = int(rng.integers(0, DECISIONS - 10)), int(rng.integers(1, 40))
        level = rng.uniform(1, 9)
        ramp = np.minimum(1, np.arange(length) / max(1, rng.integers(1, 6)))
        end = min(DECISIONS, start + length)
        logits[start:end, k] += (level * ramp)[:end - start] + rng.standard_normal(end - start)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return np.round(p * 1024) / 1024


def off_the_grid(value, depth):
    """No mean of `depth` multiples of 1/1024 lies within a hair of `value`."""
    steps = value * 1024 * depth
    return abs(steps - round(steps)) > 0.01


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    for thresholds, smoothing, minimum, sure, sustained in CASES:
        depths = set(tr.per_class(smoothing))
        for value in thresholds + [0.3] + ([sure] if sure else []):
            assert all(off_the_grid(value, d) for d in depths), value
        if sustained:
            assert all(off_the_grid(v, sustained[0]) for v in sustained[1] if v is not None)
    rng = np.random.default_rng(20261126)
    cases = []
    for thresholds, smoothing, minimum, sure, sustained in CASES:
        for _ in range(4):
            decisions = stream(rng)
            events = tr.track(decisions, thresholds, smoothing=smoothing, minimum=minimum, sure=sure, sustained=sustained)
            cases.append({
                "thresholds": thresholds, "smoothing": tr.per_class(smoothing), "minimum": minimum, "sure": sure,
                "sustainedDecisions": sustained[0] if sustained else 20,
                "sustained": [t if t is not None else -1 for t in sustained[1]] if sustained else [-1] * 4,
                "decisions": (decisions * 1024).astype(int).tolist(),
                "events": [[int(k), round(float(t), 6)] for k, t in events]})
    assert sum(len(c["events"]) for c in cases) >= 40, "too few events to compare"
    with open(out + ".tmp", "w") as f:
        json.dump({"generator": "training/tracker_fixture.py", "step": 0.1, "scale": 1024, "cases": cases}, f)
    os.replace(out + ".tmp", out)
    print(f"wrote {out}: {len(cases)} streams, {sum(len(c['events']) for c in cases)} events")


if __name__ == "__main__":
    main()

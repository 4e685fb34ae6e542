#!/usr/bin/env python3
"""One announcement per ring, on real doorbells: each of ProtoSound's five real doorbell
recordings is enrolled, then rung three times (10, 5 and 15 dB over the bed) into a real
household recording it was never enrolled with (washing up, a running tap, an exercise bike),
and `earshot watch FILE --cooldown 0` listens with the alert detector on. Each ring should be
announced exactly once; a ring announced both as the detector's `doorbell` and as the enrolled
sound is the double this guards against.

    .venv/bin/python eval/sounds/one_per_ring.py --earshot .build/release/earshot
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import soundfile as sf

from training.realaudio import RATE, load as read, rms


def write(path, x):
    sf.write(path, np.clip(x, -1, 1), RATE, subtype="PCM_16")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--earshot", required=True)
    p.add_argument("--data", default="../shared/data")
    a = p.parse_args()
    bells = sorted(glob.glob(f"{a.data}/sounds/protosound/doorbell/*.wav"))
    beds = [f"{a.data}/noise/{n}.wav" for n in ("doing_the_dishes", "running_tap", "exercise_bike")]
    if not bells or not all(os.path.exists(b) for b in beds):
        sys.exit(f"one_per_ring: the real doorbells and household recordings are not in {a.data}; skipped")
    rings = doubles = missed = 0
    for index, bell_path in enumerate(bells):
        bell = read(bell_path)
        bed = read(beds[index % len(beds)])[: 30 * RATE] * 0.3
        with tempfile.TemporaryDirectory() as work:
            write(f"{work}/ring.wav", np.concatenate([np.zeros(RATE // 2), bell, np.zeros(RATE // 2)]) * 0.5 / max(np.abs(bell).max(), 1e-9))
            subprocess.run([a.earshot, "sounds", "enroll", "my_door", f"{work}/ring.wav", "--data", work], check=True, capture_output=True)
            scene, onsets = bed.copy(), [5.0, 13.0, 21.0]
            for onset, snr in zip(onsets, (10, 5, 15)):
                start = int(onset * RATE)
                segment = bell * rms(bed[start:start + len(bell)]) / rms(bell) * 10 ** (snr / 20)
                scene[start:start + len(bell)] += segment
            write(f"{work}/scene.wav", scene)
            out = subprocess.run([a.earshot, "watch", f"{work}/scene.wav", "--data", work, "--cooldown", "0"], capture_output=True, text=True)
            events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
            for onset in onsets:
                near = [e["label"] for e in events if onset - 0.5 <= e["start"] <= onset + 3]
                rings += 1
                doubles += len(near) > 1
                missed += not near
                print(f"{os.path.basename(bell_path)} ring at {onset:4.1f} s: {near}")
    print(f"{rings} rings: {doubles} announced more than once, {missed} not announced")
    sys.exit(1 if doubles else 0)


if __name__ == "__main__":
    main()

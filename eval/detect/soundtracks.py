"""The evaluation soundtracks whole, at their own level, through `earshot detect`: every event is
a false alarm (the music holds no alert), counted per hour and per class. R6 of `evaluate.py`
hears an hour of the same music in pieces, alone and under speech; this hears all of it as a
listener would, track by track, with the weights in earshot's bundle.

    .venv/bin/python eval/detect/soundtracks.py [.build/release/earshot]
"""
import collections
import json
import os
import subprocess
import sys

import soundfile as sf

from training import package_music

HERE = os.path.dirname(os.path.abspath(__file__))


def events(earshot, path):
    """The classes of the events earshot announces in one recording; a failed run is an error."""
    run = subprocess.run([earshot, "detect", path, "--format", "jsonl"], capture_output=True, text=True)
    if run.returncode != 0:
        reason = (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"earshot detect failed on {path}: {reason}")
    return [json.loads(line)["label"] for line in run.stdout.splitlines() if line.startswith("{")]


def main():
    earshot = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", ".build", "release", "earshot")
    if not os.access(earshot, os.X_OK):
        raise SystemExit(f"{earshot}: not an executable earshot (make release)")
    counts, seconds = collections.Counter(), 0.0
    for path in package_music.tracks("eval"):
        try:
            seconds += sf.info(path).duration
        except RuntimeError as error:  # a truncated or corrupt track: one line, not a traceback
            raise SystemExit(f"{path}: not a readable recording ({error})")
        counts.update(events(earshot, path))
    if seconds == 0:
        raise SystemExit("no evaluation soundtracks: cannot count false alarms in them")
    hours = seconds / 3600
    by_class = ", ".join(f"{c} {n}" for c, n in counts.most_common()) or "none"
    print(f"the evaluation soundtracks whole ({seconds / 60:.1f} min): {sum(counts.values())} false alarms, "
          f"{sum(counts.values()) / hours:.1f} an hour ({by_class})")


if __name__ == "__main__":
    main()

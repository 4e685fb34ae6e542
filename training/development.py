"""Exported weights judged on the development clips, each folder on its own, at the operating
point the weights carry (`train.decisions_at_operating_point`, then `train.judge`): recall per
class, false alarms per hour of the folder's alert-free audio, each kind of background apart
(music errs where speech and noise do not), and delays. These are the development figures
docs/alert-detector-history.md gives for each stage; the development split is never trained on.

    .venv/bin/python training/development.py WEIGHTS.safetensors [MORE.safetensors ...]
        [--folders training/data/real-dev,training/data/real-dev-music]

The alert-free folders (`real-dev-quiet`, `real-dev-music-quiet`: 15 hours) take the longest;
`--folders` judges fewer. A folder that was never made is named and passed over.
"""
import argparse
import glob
import json
import os

import numpy as np

from training import train as tr

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
FOLDERS = ["real-dev", "real-dev-music", "real-dev-quiet", "real-dev-music-quiet"]


def false_alarms_by_kind(decisions, targets, kinds, point):
    """Per kind of background: false alarms per hour of its alert-free clips, and their classes."""
    thresholds, smoothing, minimum, sure, sustained = point
    quiet = targets.max(axis=1) == 0
    out = {}
    for kind in sorted(set(kinds[quiet])):
        of_kind = quiet & (kinds == kind)
        classes = {}
        for c in np.nonzero(of_kind)[0]:
            for k, _ in tr.track(decisions[c], thresholds, smoothing=smoothing, minimum=minimum, sure=sure, sustained=sustained):
                classes[tr.ALERT_CLASSES[k - 1]] = classes.get(tr.ALERT_CLASSES[k - 1], 0) + 1
        hours = tr.clip_hours(targets, of_kind)
        out[str(kind)] = {"hours": round(hours, 2), "per hour": tr.per_hour(sum(classes.values()), hours), "classes": classes}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("weights", nargs="+", help="exported .safetensors weights (train.py's output)")
    parser.add_argument("--folders", default=",".join(os.path.join(DATA, f) for f in FOLDERS),
                        help="development folders, separated by commas (default: all four)")
    args = parser.parse_args()
    for path in args.weights:
        tr.exported(path)  # every path readable before the long part begins
    judged = 0
    for folder in args.folders.split(","):
        if not glob.glob(os.path.join(folder, "shard*.npz")):
            print(f"{folder}: no development clips there (make them with make_realset.py --split dev); passed over")
            continue
        clips, targets, kinds = tr.load(folder)
        judged += 1
        for path in args.weights:
            decisions, point = tr.decisions_at_operating_point(path, clips)
            print(json.dumps({"folder": folder, "weights": path, **tr.judge(decisions, targets, *point),
                              "false alarms by background": false_alarms_by_kind(decisions, targets, kinds, point)}), flush=True)
    if not judged:
        raise SystemExit("no development clips in any folder given: nothing judged")


if __name__ == "__main__":
    main()

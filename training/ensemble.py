"""Several exported networks heard together: their probabilities averaged at every decision,
and thresholds chosen for the average on the development clips by the rule `train.py` uses
(`train.choose_operating_point`: the most recall at most one false alarm an hour of the
alert-free development audio). Its answer is whether an ensemble is worth running more than one
network on the listening path, which costs a network's time again for every member.

    .venv/bin/python training/ensemble.py A.safetensors B.safetensors [...] [--all-trackers]

The tracker is the first weights' own (smoothing, minimum, sure threshold, sustained route) with
its thresholds chosen afresh, so the chosen point compares with the first weights' report;
`--all-trackers` tries every tracker `train.py` does. Decisions over the 15 alert-free hours take
about 25 minutes a network on two cores.
"""
import argparse
import json
import os


from training import features as feat
from training import train as tr
from training.development import DATA


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("weights", nargs="+", help="two or more exported .safetensors weights hearing the same window")
    parser.add_argument("--all-trackers", action="store_true", help="try every tracker train.py does, not only the first weights'")
    args = parser.parse_args()
    if len(args.weights) < 2:
        raise SystemExit("an ensemble needs two or more weights")
    windows = {path: tr.exported(path)[1].get("window") for path in args.weights}  # each readable first
    if len(set(windows.values())) > 1:
        raise SystemExit(f"the weights hear different windows ({windows}): their decisions do not line up")
    mixed = ",".join(os.path.join(DATA, f) for f in ("real-dev", "real-dev-music"))
    quiet = ",".join(os.path.join(DATA, f) for f in ("real-dev-quiet", "real-dev-music-quiet"))
    clips, targets, _ = tr.load(mixed)
    frames = feat.as_stream(clips)
    decisions, quiet_decisions, quiet_targets = 0, 0, None
    for path in args.weights:
        tensors, _ = tr.exported(path)
        decisions = decisions + tr.decisions_of(tr.Folded(tensors), frames) / len(args.weights)
        heard, quiet_targets = tr.quiet_decisions(tr.Folded(tensors), quiet)
        quiet_decisions = quiet_decisions + heard / len(args.weights)
    _, smoothing, minimum, sure, sustained = tr.operating_point_of(tr.exported(args.weights[0])[1])
    trackers = tr.TRACKERS if args.all_trackers else ((smoothing, minimum, sure, sustained),)
    _, _, report = tr.choose_operating_point(decisions, targets, quiet_decisions, quiet_targets, trackers=trackers)
    print(json.dumps({"ensemble": args.weights, "chosen": report["chosen"], "development clips": report["development clips"]}))


if __name__ == "__main__":
    main()

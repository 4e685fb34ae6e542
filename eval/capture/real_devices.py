"""Echo cancellation on real device recordings, beside SpeexDSP and WebRTC AEC3.

`../shared/data/aec/real/` holds what laptops and phones recorded while their loudspeakers
played a far end (16 kHz): far-end single talk (`*_farend_singletalk_*`), double talk with and
without movement (`*_doubletalk*`), and a desk loudspeaker and microphone (`realworld_test_*`).
Nothing here is simulated, and nothing in Earshot was tuned on it.

For each recording and system:
  ERLE         far-end single talk: microphone level over output level from 2 s on (dB)
  worst 0.5 s  the largest output-over-microphone level of any 0.5 s window (dB; above 0 the
               system added sound, and in single talk that is echo)
  AECMOS       Microsoft's echo and degradation MOS (`speechmos`): single talk rates echo only

    .venv/bin/python eval/capture/real_devices.py --earshot .build/release/earshot
"""
import argparse
import glob
import os
import sys

import numpy as np
import soundfile as sf

from eval.capture.evaluate import RATE, Speex, aec3, aecmos, chosen, earshot, level


def recordings(folder):
    for mic_path in sorted(glob.glob(os.path.join(folder, "*_mic.flac"))):
        name = os.path.basename(mic_path)[:-len("_mic.flac")]
        mic, r1 = sf.read(mic_path)
        far_path = mic_path.replace("_mic.flac", "_lpb.flac")
        if not os.path.exists(far_path):
            raise SystemExit(f"{name}: no far-end recording {os.path.basename(far_path)} beside its microphone")
        far, r2 = sf.read(far_path)
        if r1 != RATE or r2 != RATE:
            raise SystemExit(f"{name}: expected {RATE} Hz recordings")
        far = np.concatenate([far, np.zeros(max(0, len(mic) - len(far)))])[:len(mic)]
        talk = "dt" if "doubletalk" in name else "st"
        yield name, talk, mic, far


def worst_window(mic, out, window=0.5):
    w = int(window * RATE)
    excess = [level(out[s:s + w]) - level(mic[s:s + w])
              for s in range(0, len(mic) - w + 1, w // 2) if level(mic[s:s + w]) > -70]
    return max(excess) if excess else float("nan")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--aec-option", action="append", default=[], help="passed on to earshot aec (repeatable)")
    parser.add_argument("--only", default="", help="systems to run, comma-separated (earshot,speex,aec3)")
    args = parser.parse_args()
    folder = os.path.join(args.data, "aec", "real")
    if not glob.glob(os.path.join(folder, "*_mic.flac")):
        sys.exit(f"no real echo recordings under {folder}")
    systems = {"earshot": ("Earshot", lambda m, f: earshot(args.earshot, m, f, args.aec_option)),
               "speex": ("SpeexDSP MDF + preprocess", Speex()), "aec3": ("WebRTC AEC3", aec3)}
    keys = chosen({k: k for k in systems}, args.only)
    rows = {k: [] for k in keys}
    print("| recording | talk | system | ERLE from 2 s (dB) | worst 0.5 s (dB) | AECMOS echo | AECMOS degradation |")
    print("|---|---|---|---|---|---|---|")
    for name, talk, mic, far in recordings(folder):
        for key in keys:
            label, system = systems[key]
            out = np.asarray(system(mic, far))[:len(mic)]
            e = level(mic[2 * RATE:]) - level(out[2 * RATE:]) if talk == "st" else float("nan")
            echo_mos, deg_mos = aecmos(far, mic, out, 0, len(mic), talk)
            worst = worst_window(mic, out)
            rows[key].append((talk, e, worst, echo_mos, deg_mos))
            short = name if name == "realworld_test" else name.split("_")[0][:8] + (" +move" if "movement" in name else "")
            print(f"| {short} | {talk} | {label} | {e:.1f} | {worst:+.1f} | {echo_mos:.2f} | {deg_mos:.2f} |", flush=True)
    print("\n| system | median ERLE, single talk | worst 0.5 s, any | AECMOS echo, single talk | AECMOS echo / degradation, double talk |")
    print("|---|---|---|---|---|")
    for key in keys:
        r = rows[key]
        st = [v for v in r if v[0] == "st"]
        dt = [v for v in r if v[0] == "dt"]
        print(f"| {systems[key][0]} | {np.median([v[1] for v in st]):.1f} dB ({', '.join(f'{v[1]:.0f}' for v in st)}) | "
              f"{max(v[2] for v in r):+.1f} dB | {np.mean([v[3] for v in st]):.2f} | "
              f"{np.mean([v[3] for v in dt]):.2f} / {np.mean([v[4] for v in dt]):.2f} |")


if __name__ == "__main__":
    main()

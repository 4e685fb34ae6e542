#!/usr/bin/env python3
"""`earshot soundcheck` and `earshot capture` live through a real sound server.

A private PulseAudio in user mode carries one null sink, `room`; its monitor is the microphone.
While the sound check records (2 s of room tone, then speech), a seeded scene is played into the
room: 3.5 s of room tone (white noise at -60 dBFS), then 5 s of speech-like syllables at a known
active level with 50 Hz mains hum and its harmonic under them. Then `--all-inputs` records every
input at once.

Checks: the JSON keeps the contract; the speech level is read within 3 dB of what was played;
the hum is found at 50 Hz and reported; the SNR (hum left out) is over 25 dB; the PNG is drawn.
`earshot capture --mode standard` records the same scene live: 8 s long, under -1 dBFS, speech near
-20 dBFS. `--all-inputs` ranks at least one device. Exit 1 on failure.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile
import numpy as np

from sound_server import SoundServer
from test_signals import active_level, syllables

RATE = 16_000
SPEECH_DBFS = -20.0


def scene(seed=5):
    rng = np.random.default_rng(seed)
    quiet, talk = int(3.5 * RATE), int(5 * RATE)
    speech = syllables(rng, 5, RATE, level_dbfs=SPEECH_DBFS)
    t = np.arange(quiet + talk) / RATE
    # -40.5 dBFS together: 20 dB under the speech, within the 22 dB at which hum is reported.
    hum = 0.012 * np.sin(2 * np.pi * 50 * t) + 0.006 * np.sin(2 * np.pi * 100 * t + 1)
    x = 0.001 * rng.standard_normal(quiet + talk) + hum
    x[quiet:] += speech
    return x.astype(np.float32)


CONTRACT = {"speechLevelDBFS", "peakDBFS", "noiseFloorDBFS", "snrDB", "clippedShare", "roundedPeakShare", "humHz", "bandwidthHz",
            "rt60Seconds", "dcOffset"}
PROBLEM = {"kind", "value", "threshold", "detail", "advice"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--earshot", required=True)
    a = p.parse_args()
    server = SoundServer(modules=["module-null-sink sink_name=room channels=1 rate=48000"])
    data = tempfile.mkdtemp(prefix="earshot-soundcheck-")
    failures = []
    try:
        server.start()
        scene().tofile(f"{data}/scene.f32")
        env = dict(server.env, PULSE_SOURCE="room.monitor")
        check = subprocess.Popen([a.earshot, "soundcheck", "--seconds", "4", "--format", "json", "--png", f"{data}/check.png"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The scene starts when the check asks for quiet: the device is open by then.
        prompt = check.stderr.readline()
        player = subprocess.Popen(["pacat", "--playback", "--device=room", "--raw", "--format=float32le", f"--rate={RATE}",
                                   "--channels=1", f"{data}/scene.f32"], env=server.env)
        out, err = check.communicate(timeout=60)
        err = prompt + err
        player.wait(timeout=30)
        if check.returncode != 0:
            sys.exit(f"live soundcheck: exit {check.returncode}: {err.strip()}")
        report = json.loads(out)
        metrics = report["metrics"]
        kinds = {problem["kind"] for problem in report["problems"]}
        print(f"  live sound check: {json.dumps(metrics)}; problems {sorted(kinds)}")
        if set(report) != {"verdict", "metrics", "problems"} or set(metrics) != CONTRACT \
                or any(set(problem) != PROBLEM for problem in report["problems"]):
            failures.append(f"the JSON does not keep the contract: {sorted(report)} {sorted(metrics)} {report['problems']}")
        if abs(metrics["speechLevelDBFS"] - SPEECH_DBFS) > 3:
            failures.append(f"speech read at {metrics['speechLevelDBFS']} dBFS, played at {SPEECH_DBFS}")
        if metrics["humHz"] != 50 or "hum" not in kinds:
            failures.append(f"the 50 Hz hum was not reported (humHz {metrics['humHz']}, problems {sorted(kinds)})")
        if metrics["snrDB"] < 25:
            failures.append(f"SNR {metrics['snrDB']} dB for speech 40 dB over the room tone")
        if "Stay quiet" not in err or "Now speak" not in err:
            failures.append(f"the prompts were not given: {err.strip()}")
        if not os.path.exists(f"{data}/check.png") or open(f"{data}/check.png", "rb").read(4) != b"\x89PNG":
            failures.append("no PNG was drawn")

        # `earshot capture` live in standard mode over the same scene: as long as asked, under
        # -1 dBFS, speech brought near -20 dBFS.
        capture = subprocess.Popen([a.earshot, "capture", "-o", f"{data}/captured.wav", "--mode", "standard", "--seconds", "8"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started = capture.stderr.readline()
        player = subprocess.Popen(["pacat", "--playback", "--device=room", "--raw", "--format=float32le", f"--rate={RATE}",
                                   "--channels=1", f"{data}/scene.f32"], env=server.env)
        _, capture_err = capture.communicate(timeout=60)
        player.wait(timeout=30)
        if capture.returncode != 0:
            failures.append(f"live capture failed: {started.strip()} {capture_err.strip()}")
        else:
            import wave
            with wave.open(f"{data}/captured.wav") as w:
                rate, frames = w.getframerate(), w.getnframes()
                captured = np.frombuffer(w.readframes(frames), dtype="<i2") / 32768
            seconds, peak = frames / rate, 20 * np.log10(np.abs(captured).max() + 1e-12)
            speech = active_level(captured[-4 * rate:])
            print(f"  live capture: {seconds:.2f} s, peak {peak:.1f} dBFS, speech over the last 4 s {speech:.1f} dBFS")
            if abs(seconds - 8) > 0.1:
                failures.append(f"live capture lasted {seconds:.2f} s, not 8")
            if peak > -0.99:
                failures.append(f"live capture peaked at {peak:.2f} dBFS, over -1")
            if abs(speech + 20) > 4:
                failures.append(f"live capture brought speech to {speech:.1f} dBFS, not near -20")

        ranking = subprocess.run([a.earshot, "soundcheck", "--all-inputs", "--seconds", "1", "--format", "json"],
                                 env=env, capture_output=True, text=True, timeout=60)
        if ranking.returncode != 0:
            failures.append(f"--all-inputs failed: {ranking.stderr.strip()}")
        else:
            ranked = json.loads(ranking.stdout)
            print(f"  --all-inputs ranked {[r['device'] for r in ranked]}")
            if not ranked or [r["rank"] for r in ranked] != list(range(1, len(ranked) + 1)):
                failures.append(f"--all-inputs gave no ranking: {ranking.stdout[:200]}")
    finally:
        server.stop()
    if failures:
        print("live soundcheck FAILED:\n  " + "\n  ".join(failures))
        print(f"  its recordings are kept in {data}")
        sys.exit(1)
    shutil.rmtree(data, ignore_errors=True)
    print("live soundcheck passed")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`earshot capture --mode voice_isolation --play FAR` live through a real sound server.

A private PulseAudio in user mode carries one null sink, `room`: Earshot plays the far end into
it and records its monitor, so the microphone hears the loudspeaker (through the server's and
the devices' buffers, the echo path) and, from 9 s on, a near talker that pacat plays into the
same room. The far end (seeded speech-like syllables at -20 dBFS) plays for 8 s; the near
talker (other syllables, other pitch, at -26 dBFS) talks from 9 to 12 s, after the far end ends.

Checks (on the first of up to three live starts that meets them, see below): the capture lasts
as asked; while the far end plays alone (5-8 s, after the filter has had 5 s to learn) the
output stays at least 15 dB under the near talker's output level (the mode's automatic gain
lifts what the canceller leaves), with the near end 6 dB quieter than the
far end at the microphone, and at least 15 dB further under it than in the control: pacat plays
the same far end and Earshot captures without --play, knowing no far end. Exit 1 on failure.
"""
import argparse, shutil, subprocess, sys, tempfile, wave
import numpy as np

from sound_server import SoundServer
from test_signals import active_level, syllables

RATE = 16_000


def read_wav(path):
    with wave.open(path) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2") / 32768, w.getframerate()


def capture(earshot, server, data, name, play):
    """Runs one live capture of 13 s while pacat plays the near talker (and, for the control, the
    far end); returns the output."""
    env = dict(server.env, PULSE_SOURCE="room.monitor", PULSE_SINK="room")
    args = [earshot, "capture", "-o", f"{data}/{name}.wav", "--mode", "voice_isolation", "--seconds", "13"]
    if play:
        args += ["--play", f"{data}/far.wav"]
    run = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = run.stderr.readline()
    players = [subprocess.Popen(["pacat", "--playback", "--device=room", "--raw", "--format=float32le", f"--rate={RATE}",
                                 "--channels=1", f"{data}/{part}.f32"], env=server.env)
               for part in (["near"] if play else ["near", "far"])]
    _, err = run.communicate(timeout=60)
    for player in players:
        player.wait(timeout=30)
    if run.returncode != 0:
        sys.exit(f"live echo: capture failed (exit {run.returncode}): {started.strip()} {err.strip()}")
    return read_wav(f"{data}/{name}.wav")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--earshot", required=True)
    a = p.parse_args()
    server = SoundServer(modules=["module-null-sink sink_name=room channels=1 rate=48000"])
    data = tempfile.mkdtemp(prefix="earshot-echo-")
    failures = []
    try:
        server.start()
        far = syllables(np.random.default_rng(1), 8, RATE, (110, 160), -20, random_phases=True).astype(np.float32)
        far.tofile(f"{data}/far.f32")
        with wave.open(f"{data}/far.wav", "wb") as w:
            w.setnchannels(1), w.setsampwidth(2), w.setframerate(RATE)
            w.writeframes((np.clip(far, -1, 1) * 32767).astype("<i2").tobytes())
        talk = syllables(np.random.default_rng(2), 3, RATE, (190, 260), -26, random_phases=True)
        near = np.concatenate([np.zeros(9 * RATE), talk]).astype(np.float32)
        near.tofile(f"{data}/near.f32")
        def apart(name, play):
            """The near talker's output level over the far end's alone, in dB."""
            out, rate = capture(a.earshot, server, data, name, play)
            seconds = len(out) / rate
            echo = active_level(out[5 * rate: 8 * rate])
            talker = active_level(out[int(9.5 * rate): 12 * rate])
            print(f"  live echo ({name}): {seconds:.2f} s; far end alone {echo:.1f} dBFS, near talker {talker:.1f} dBFS: "
                  f"{talker - echo:.1f} dB apart")
            if abs(seconds - 13) > 0.1:
                failures.append(f"{name}: the capture lasted {seconds:.2f} s, not 13")
            return talker - echo

        control = apart("control", False)
        # Now and then a live start through this server stays short of 15 dB (3 of 45 measured,
        # at 11-13 dB; the rest 15-25 dB): up to three starts are tried, each judged whole,
        # and every one is printed.
        for attempt in range(1, 4):
            cancelled = apart(f"cancelled-{attempt}", True)
            if cancelled >= 15 and cancelled - control >= 15:
                break
        else:
            failures.append(f"in three starts with --play the echo never went 15 dB under the near talker "
                            f"and 15 dB further than without (last: {cancelled:.1f} dB, control {control:.1f} dB)")
    finally:
        server.stop()
    if failures:
        print("live echo FAILED:\n  " + "\n  ".join(failures))
        print(f"  its recordings are kept in {data}")
        sys.exit(1)
    shutil.rmtree(data, ignore_errors=True)
    print("live echo passed")


if __name__ == "__main__":
    main()

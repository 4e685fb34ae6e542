#!/usr/bin/env python3
"""`earshot watch` live through a real sound server, with a hub, and the server killed midway.

A private PulseAudio in user mode carries one null sink, `room`; its monitor is the microphone.
A doorbell (a seeded two-note chime) is enrolled from a recording; `earshot serve` runs as the
hub and `earshot watch --hub` listens. The chime is played into the room in noise; then the
sound server is killed and started again, and the chime is played once more.

Checks: each ring is announced on stdout within --max-delay seconds of its start; the hub stores
both; watch says it lost the microphone and that it is back; it stops cleanly on SIGTERM;
its resident memory grows by less than --max-growth-mb from the first ring to the end, across
the server's crash. Exit 1 on failure.
"""
import argparse, json, shutil, signal, subprocess, sys, tempfile, time, urllib.request, wave
import numpy as np

from sound_server import SoundServer

RATE = 16_000


def chime(gain=0.3):
    parts = []
    for frequency in (660.0, 550.0):
        t = np.arange(int(0.4 * RATE)) / RATE
        parts.append(np.exp(-t * 5) * (np.sin(2 * np.pi * frequency * t) + 0.4 * np.sin(2 * np.pi * 3 * frequency * t)))
    return gain * np.concatenate(parts)


def write_wav(path, x):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


def scene(seed, onset=2.0, seconds=5.0):
    """Room noise with the chime `onset` seconds in, 15 dB above it."""
    rng = np.random.default_rng(seed)
    noise = 0.01 * rng.standard_normal(int(seconds * RATE))
    unit = chime(1.0)
    ring = unit * 0.01 * 10 ** (15 / 20) / np.sqrt(np.mean(unit[: int(0.2 * RATE)] ** 2))
    start = int(onset * RATE)
    noise[start:start + len(ring)] += ring
    return noise.astype(np.float32)


def rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--earshot", required=True)
    p.add_argument("--max-delay", type=float, default=2.0)
    p.add_argument("--max-growth-mb", type=float, default=10)
    a = p.parse_args()

    server = SoundServer(modules=["module-null-sink sink_name=room channels=1 rate=48000"])
    data = tempfile.mkdtemp(prefix="earshot-watch-")
    procs, failures = [], []
    try:
        server.start()
        write_wav(f"{data}/ring.wav", np.concatenate([np.zeros(RATE // 2), chime(), np.zeros(RATE // 2)]) + 0.001 * np.random.default_rng(1).standard_normal(RATE * 9 // 5))
        subprocess.run([a.earshot, "sounds", "enroll", "front_door", f"{data}/ring.wav", "--data", data], check=True, capture_output=True)

        hub_log = open(f"{data}/hub.log", "w")
        hub = subprocess.Popen([a.earshot, "serve", "--port", "0", "--data", data], stdout=subprocess.PIPE, stderr=hub_log, text=True)
        procs.append(hub)
        url = token = None
        while url is None:
            line = hub.stdout.readline()
            if not line:
                sys.exit("live watch: the hub did not start: " + open(f"{data}/hub.log").read())
            if line.startswith("token: "):
                token = line.split()[1]
            if "Earshot hub on " in line:
                url = line.split()[3].rstrip("/")

        watch_out, watch_err = open(f"{data}/watch.out", "w"), open(f"{data}/watch.err", "w")
        watch = subprocess.Popen([a.earshot, "watch", "--data", data, "--cooldown", "5", "--hub", url, "--token", token],
                                 env=dict(server.env, PULSE_SOURCE="room.monitor"), stdout=watch_out, stderr=watch_err)
        procs.append(watch)
        time.sleep(3)
        if watch.poll() is not None:
            sys.exit("live watch: earshot watch exited early: " + open(f"{data}/watch.err").read())
        for seed in (1, 2):
            scene(seed).tofile(f"{data}/scene{seed}.f32")

        def announced(count, deadline):
            while time.monotonic() < deadline:
                lines = [json.loads(l) for l in open(f"{data}/watch.out").read().splitlines() if l.strip()]
                sounds = [l for l in lines if l.get("kind") == "sound"]
                if len(sounds) >= count:
                    return sounds, time.monotonic()
                time.sleep(0.05)
            return None, None

        # The ring is announced while pacat still plays the rest of the scene: poll from the start.
        # The second round kills the sound server first and waits for watch to find it again.
        for round_, seed in enumerate((1, 2), start=1):
            if round_ == 2:
                server.crash()
                time.sleep(5)  # watch notices (3 s without audio) and starts waiting
                server.start()
                deadline = time.monotonic() + 20
                while "the microphone is back" not in open(f"{data}/watch.err").read() and time.monotonic() < deadline:
                    time.sleep(0.2)
                time.sleep(1)
            sent = time.monotonic() + 2.0
            player = subprocess.Popen(["pacat", "--playback", "--device=room", "--raw", "--format=float32le", f"--rate={RATE}",
                                       "--channels=1", f"{data}/scene{seed}.f32"], env=server.env)
            procs.append(player)
            sounds, when = announced(round_, sent + 10)
            player.wait(timeout=30)
            if sounds is None:
                failures.append(f"ring {round_} was not announced")
            else:
                delay = when - sent
                print(f"  ring {round_}: announced {delay:.2f} s after it began: {json.dumps(sounds[-1])}")
                if delay > a.max_delay:
                    failures.append(f"ring {round_} announced {delay:.2f} s after it began (> {a.max_delay} s)")
            time.sleep(1)
            if round_ == 1:
                # Measured once watch has heard a ring: before that it may still be loading (its
                # resident memory 3 s after launch was 66–85 MB, and always about 86 MB later).
                memory_start = rss_mb(watch.pid)

        err = open(f"{data}/watch.err").read()
        for needed in ("lost the microphone", "the microphone is back"):
            if needed not in err:
                failures.append(f"watch did not say '{needed}'")
        memory_end = rss_mb(watch.pid)
        print(f"  memory: {memory_start:.1f} MB after the first ring, {memory_end:.1f} MB at the end")
        if memory_end - memory_start > a.max_growth_mb:
            failures.append(f"resident memory grew by {memory_end - memory_start:.1f} MB")

        time.sleep(2)  # the hub has the events
        request = urllib.request.Request(f"{url}/api/events?since=0", headers={"Authorization": f"Bearer {token}"})
        stored = [e for e in json.load(urllib.request.urlopen(request, timeout=10)) if e["kind"] == "sound"]
        print(f"  hub: {len(stored)} sound event(s) stored")
        if len(stored) < 2:
            failures.append(f"the hub stored {len(stored)} sound events, not 2")

        watch.send_signal(signal.SIGTERM)
        try:
            code = watch.wait(timeout=15)
            if code != 0:
                failures.append(f"watch exited {code} on SIGTERM")
        except subprocess.TimeoutExpired:
            failures.append("watch did not stop within 15 s of SIGTERM")
        print("earshot watch said:\n" + "\n".join("  " + l for l in open(f"{data}/watch.err").read().strip().splitlines()[-10:]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        server.stop()
    if failures:
        print("FAIL: " + "; ".join(failures))
        print(f"  its recordings are kept in {data}")
        return 1
    shutil.rmtree(data, ignore_errors=True)
    print("PASS: watch announced both rings, across a sound server restart")
    return 0


if __name__ == "__main__":
    sys.exit(main())

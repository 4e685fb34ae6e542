#!/usr/bin/env python3
"""`earshot listen` live through a real sound server, measured from outside.

PulseAudio runs in user mode with a private runtime directory, in one of two set-ups:

- one device (`--devices one`): a stereo null sink, `probe`, carries two mono sinks remapped
  onto its channels: `room` (left), whose monitor is Earshot's microphone, and `headphones`
  (right), where Earshot plays. `probe.monitor` records both at once, on one clock, so the
  delay of every burst is measured to the sample.
- two devices (`--devices two`): `room` and `headphones` are null sinks of their own, each with
  its own timing, as a microphone and headphones that are different devices are. Each monitor is
  recorded by its own `parec`, with the computer's time of every piece that arrives, and each
  recording is read on the computer's clock (a device's samples are on its own). That clock
  shows whether the delay grows, but not its size to the millisecond: a null sink renders ahead
  by a block whose size its clients set, so the two recordings sit 0–20 ms apart on it, and no
  reference sound fixes that (clicks played into both through a combine sink did not: its two
  sides start up to 20 ms apart). The size of the delay is checked in the one-device set-up.

A 100 ms tone burst goes into the room every second. Both cores are loaded for a while in the
middle of the run. Checks: every burst outside the loaded window (and a short recovery after it)
arrives; with one device, the median added delay is at most --max-median-ms; the delay of
the last 20 bursts is within --max-drift-ms of the first 20, each read as the 10th percentile
of its bursts (a drift moves every burst, a stall of a busy virtual machine delays a few). Bursts
in a half second when the virtual machine's host took more than --max-steal of the CPUs (steal
time), and 2 s after, are printed but not judged; a run left with too few judged bursts for a
median and a drift (twice the window of 20) is run again, up to --attempts, and so is a run whose
drift alone failed: it fails when the next judged run drifts too. Prints the delay of every burst
and a summary; exit 1 on failure.
"""
import argparse, json, os, signal, subprocess, sys, threading, time
import numpy as np

from sound_server import PROBE_MODULES, RATE, SoundServer


def bursts(seconds, period=1.0, length=0.1, frequency=1000.0, level_dbfs=-20.0, first=0.5):
    signal_ = np.zeros(int(seconds * RATE), np.float32)
    n = int(length * RATE)
    t = np.arange(n) / RATE
    ramp = int(0.005 * RATE)
    envelope = np.ones(n)
    envelope[:ramp] = 0.5 - 0.5 * np.cos(np.pi * np.arange(ramp) / ramp)
    envelope[-ramp:] = envelope[:ramp][::-1]
    burst = (10 ** (level_dbfs / 20) * np.sin(2 * np.pi * frequency * t) * envelope).astype(np.float32)
    onsets = np.arange(first, seconds - period + 1e-9, period)
    for onset in onsets:
        start = int(onset * RATE)
        signal_[start:start + n] += burst
    return signal_


def envelope(x, smoothing=0.002):
    k = max(1, int(smoothing * RATE))
    return np.sqrt(np.convolve(x.astype(np.float64) ** 2, np.ones(k) / k, mode="same"))


def onsets(x, threshold):
    """Sample indices where the envelope first rises through threshold (after being below for 0.3 s)."""
    above = x > threshold
    rises = np.flatnonzero(above[1:] & ~above[:-1]) + 1
    kept, last = [], -RATE
    for r in rises:
        if r - last > 0.3 * RATE:
            kept.append(r)
        last = r if r - last > 0.3 * RATE else last
    return np.array(kept, int)


# Two devices: the microphone's room and the headphones are null sinks of their own.
TWO_DEVICE_MODULES = [
    f"module-null-sink sink_name=room channels=1 rate={RATE}",
    f"module-null-sink sink_name=headphones channels=1 rate={RATE}",
]


class TimedRecording:
    """A monitor recorded by `parec`, with the computer's time noted as each piece arrives: a
    device's samples are on its own clock, and a null sink's is not the computer's (it adds up
    each chunk it renders in whole microseconds, rounded down, so after odd-sized chunks, from
    underruns for one, it runs a few hundred ppm fast). Read against the computer's clock, a delay
    is what a listener hears; counted in a fast sink's samples it would seem to grow."""

    def __init__(self, env, device, path):
        self.path, self.arrivals = path, []
        self.proc = subprocess.Popen(["parec", f"--device={device}", "--raw", "--format=float32le", f"--rate={RATE}",
                                      "--channels=1", "--latency-msec=20"], env=env, stdout=subprocess.PIPE, bufsize=0)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        with open(self.path, "wb") as out:
            total = 0
            while chunk := self.proc.stdout.read(65536):
                out.write(chunk)
                total += len(chunk)
                self.arrivals.append((time.monotonic(), total // 4))

    def poll(self):
        return self.proc.poll()

    def kill(self):
        self.proc.kill()

    def terminate(self):
        self.proc.terminate()

    def wait(self):
        self.proc.wait()
        self.thread.join()

    def clock(self, exclude=None):
        """(t0, rate): sample i was recorded at about t0 + i / rate on the computer's clock. A
        piece can only arrive late, never early, so the line is fitted to the pieces that came
        soonest (each second's earliest against the line), leaving out `exclude` (START, END)
        on the computer's clock (time.monotonic()), when the machine was loaded."""
        t = np.array([a for a, _ in self.arrivals])
        n = np.array([b for _, b in self.arrivals], float)
        keep = np.ones(len(t), bool) if exclude is None else ~((t >= exclude[0]) & (t <= exclude[1]))
        origin = t[0]
        t = t - origin
        t, n = t[keep], n[keep]
        rate = RATE
        for _ in range(3):
            lateness = t - n / rate
            seconds = np.floor(t).astype(int)
            soonest = [np.flatnonzero(seconds == k)[np.argmin(lateness[seconds == k])] for k in np.unique(seconds)]
            slope, _ = np.polyfit(n[soonest], t[soonest], 1)
            rate = 1 / slope
        return np.min(t - n / rate) + origin, rate


class StealWatch:
    """The share of each half second the virtual machine's host gave its CPUs to someone else
    (steal time in /proc/stat). A real device is not taken away for tens of milliseconds at a
    time; a busy host does that to every thread of ours, the sound server's included."""

    def __init__(self, interval=0.5):
        self.interval, self.samples, self.running = interval, [], True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @staticmethod
    def _read():
        """(all CPU time, stolen time) so far; (0, 0) where the kernel does not say (no /proc)."""
        try:
            with open("/proc/stat") as stat:
                fields = [int(v) for v in stat.readline().split()[1:]]
        except OSError:
            return 0, 0
        return sum(fields[:8]), fields[7] if len(fields) > 7 else 0

    def _run(self):
        total, steal = self._read()
        while self.running:
            time.sleep(self.interval)
            now_total, now_steal = self._read()
            if now_total > total:
                self.samples.append((time.monotonic(), (now_steal - steal) / (now_total - total)))
            total, steal = now_total, now_steal

    def stop(self):
        self.running = False
        self.thread.join()

    def stolen(self, threshold, recovery):
        """(START, END) spans on the computer's clock with more than `threshold` of the time
        stolen, each extended by `recovery` seconds for the buffers to settle."""
        return [(t - self.interval, t + recovery) for t, share in self.samples if share > threshold]


def play(env, device, path):
    return subprocess.Popen(["pacat", "--playback", f"--device={device}", "--raw", "--format=float32le", f"--rate={RATE}",
                             "--channels=1", "--latency-msec=20", path], env=env)


def measure(room, heard, burst_peak, to_heard=lambda i: i, heard_rate=RATE, lead=0.0):
    """(seconds into the room's recording, delay in ms or None if lost) for every burst that went
    in; `to_heard` maps a sample of the room's recording to the headphones' sample of that moment,
    known to within `lead` seconds (so a delay may read negative by up to that)."""
    room, heard = envelope(room), envelope(heard)
    sent = onsets(room, 0.5 * burst_peak)
    results = []
    for s in sent:
        early = int(lead * heard_rate)
        h = max(0, to_heard(s) - early)
        window = heard[h:h + int(0.9 * heard_rate)]
        peak = window.max(initial=0)
        # Arrived: within 20 dB of what went in (the suppressor may lower a steady tone a little).
        if peak < 0.1 * burst_peak:
            results.append((s / RATE, None))
            continue
        onset = np.flatnonzero(window > 0.5 * peak)[0]
        results.append((s / RATE, (h + onset - to_heard(s)) / heard_rate * 1000))
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--attempts", type=int, default=3, help="runs to try while the host is too busy to judge one, or to see a drift again")
    p.add_argument("--earshot", required=True)
    p.add_argument("--devices", choices=["one", "two"], default="one",
                   help="one sink for both directions, or the room and the headphones as separate devices")
    p.add_argument("--seconds", type=float, default=120)
    p.add_argument("--load", default="50:70", help="START:END seconds with every core busy ('' for none)")
    p.add_argument("--recovery", type=float, default=5, help="seconds after the load in which bursts may be missing")
    p.add_argument("--max-steal", type=float, default=0.2,
                   help="bursts in a half second when the host took more than this share of the CPUs (and 2 s after) are not judged")
    p.add_argument("--max-median-ms", type=float, default=30)
    p.add_argument("--max-drift-ms", type=float,
                   help="5 ms with one device; 10 with two, whose recordings wander up to ±5 ms against each other on the computer's clock")
    p.add_argument("--listen-args", default="", help="extra arguments for earshot listen")
    p.add_argument("--passthrough", action="store_true",
                   help="measure a plain parec | pacat pass-through instead of Earshot (the harness's own floor)")
    p.add_argument("--json", help="write the per-burst delays here")
    a = p.parse_args()
    a.max_drift_ms = a.max_drift_ms or (10.0 if a.devices == "two" else 5.0)
    drifted = 0
    for attempt in range(1, a.attempts + 1):
        verdict = run(a)
        # A drift of the live path shows in every run. One run's alone can be the sound server's:
        # after a spell of underruns on a busy machine it keeps a deeper output buffer (listen
        # reported the playback's latency going from 6 to 9.4 ms), which steal time does not
        # show. So it fails only when the next run drifts too.
        if verdict == DRIFT_ONLY and attempt < a.attempts and not drifted:
            drifted = attempt
            print(f"attempt {attempt} of {a.attempts}: drifted; run again to see whether it drifts again")
            continue
        if verdict is not None:
            return 1 if verdict == DRIFT_ONLY else verdict
        print(f"attempt {attempt} of {a.attempts}: the host was too busy to judge this run")
    if drifted:
        print(f"FAIL: attempt {drifted} drifted and no later run could be judged")
        return 1
    print(f"NOT JUDGED: in {a.attempts} runs the host never left the CPUs to us long enough (steal time)")
    return 0


DRIFT_ONLY = "drift"


def run(a):
    """0 pass, 1 fail, DRIFT_ONLY when the drift alone failed, None when too few bursts could be judged."""
    two = a.devices == "two"
    server = SoundServer(TWO_DEVICE_MODULES if two else PROBE_MODULES)
    procs = []
    try:
        server.start()
        steal = StealWatch()
        stim = bursts(a.seconds)
        stim_path = f"{server.dir}/bursts.f32"
        stim.tofile(stim_path)
        if two:
            recorders = [TimedRecording(server.env, "room.monitor", f"{server.dir}/room.f32"),
                         TimedRecording(server.env, "headphones.monitor", f"{server.dir}/headphones.f32")]
        else:
            recorders = [subprocess.Popen(["parec", "--device=probe.monitor", "--raw", "--format=float32le", f"--rate={RATE}",
                                           "--channels=2", "--latency-msec=20"], env=server.env,
                                          stdout=open(f"{server.dir}/probe.f32", "wb"))]
        procs.extend(recorders)
        listen_env = dict(server.env, PULSE_SOURCE="room.monitor", PULSE_SINK="headphones")
        listen_log = open(f"{server.dir}/listen.log", "w")
        if a.passthrough:
            command = ["sh", "-c", f"parec --device=room.monitor --raw --format=float32le --rate={RATE} --channels=1 --latency-msec=10 | "
                                   f"pacat --playback --device=headphones --raw --format=float32le --rate={RATE} --channels=1 --latency-msec=10"]
        else:
            command = [a.earshot, "listen", "--verbose", *a.listen_args.split()]
        listen = subprocess.Popen(command, env=listen_env, stdout=listen_log, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(listen)
        # Let it load its networks and open its devices (its first status line comes just before
        # the streams start; a starved host once took longer than a fixed 2 s), then settle.
        deadline = time.monotonic() + 30
        while not a.passthrough and "frames per callback" not in open(f"{server.dir}/listen.log").read():
            if listen.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        time.sleep(2.0 if a.passthrough else 1.0)
        if listen.poll() is not None:
            sys.exit("live test: earshot listen exited early:\n" + open(f"{server.dir}/listen.log").read())
        time.sleep(0.3)
        player = play(server.env, "room", stim_path)
        procs.append(player)
        started = time.monotonic()
        load_window = [float(v) for v in a.load.split(":")] if a.load else None
        loaders = []
        while player.poll() is None:
            elapsed = time.monotonic() - started
            if load_window and not loaders and elapsed >= load_window[0]:
                loaders = [subprocess.Popen([sys.executable, "-c", f"import time\nend=time.time()+{load_window[1]-load_window[0]}\nwhile time.time()<end: pass"])
                           for _ in range(os.cpu_count() or 2)]
                procs.extend(loaders)
            time.sleep(0.05)
        time.sleep(1.0)
        for recorder in recorders:
            recorder.terminate()
            recorder.wait()
        os.killpg(listen.pid, signal.SIGINT)
        try:
            listen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(listen.pid, signal.SIGKILL)
        listen_log.close()
        log = open(f"{server.dir}/listen.log").read()

        lo, hi = (load_window[0], load_window[1] + a.recovery) if load_window else (1e9, 1e9)
        to_heard, heard_rate = (lambda i: i), RATE
        if two:
            room = np.fromfile(f"{server.dir}/room.f32", np.float32)
            heard = np.fromfile(f"{server.dir}/headphones.f32", np.float32)
            loaded = (started + lo, started + hi) if load_window else None
            room_clock, heard_clock = (recorder.clock(exclude=loaded) for recorder in recorders)
            print("each device's recording against the computer's clock: "
                  f"room {(room_clock[1] / RATE - 1) * 1e6:+.0f} ppm, headphones {(heard_clock[1] / RATE - 1) * 1e6:+.0f} ppm")
            heard_rate = heard_clock[1]
            to_heard = lambda i: int(round((room_clock[0] + i / room_clock[1] - heard_clock[0]) * heard_rate))
        else:
            recording = np.fromfile(f"{server.dir}/probe.f32", np.float32)
            recording = recording[: len(recording) // 2 * 2].reshape(-1, 2)
            room, heard = recording[:, 0], recording[:, 1]
        results = measure(room, heard, 10 ** (-20 / 20), to_heard, heard_rate, lead=0.03 if two else 0.0)
        # Burst times on the stimulus' own clock: the first detected burst went out at 0.5 s.
        base = results[0][0] - 0.5 if results else 0
        steal.stop()
        stolen = [(begin - started, end - started) for begin, end in steal.stolen(a.max_steal, recovery=2.0)]
        taken = lambda x: any(begin <= x <= end for begin, end in stolen)
        missing = [round(t - base, 1) for t, d in results if d is None and not (lo <= t - base <= hi) and not taken(t - base)]
        missing_loaded = [round(t - base, 1) for t, d in results if d is None and lo <= t - base <= hi]
        judged = [(t - base, d) for t, d in results if d is not None and not taken(t - base)]
        delays = [(t - base, d) for t, d in results if d is not None]
        values = np.array([d for _, d in judged])
        # The first and the last 20 bursts judged (the first and the last 20 s on a quiet host;
        # a third of a short run each).
        window = int(min(20, a.seconds // 3))
        first = np.array([d for _, d in judged[:window]])
        last = np.array([d for _, d in judged[-window:]]) if len(judged) >= 2 * window else np.array([])
        left_out = sorted({round(t - base) for t, _ in results if taken(t - base)})
        print(f"{a.devices} device(s){' (pass-through)' if a.passthrough else ''}: the delay of every burst, ms ('-' lost)"
              + (", give or take the 0–20 ms between the two recordings" if two else ""))
        for start in range(0, int(a.seconds), 10):
            chunk = [d for t, d in delays if start <= t < start + 10]
            row = " ".join("    -" if d is None else f"{d:5.1f}" for t, d in ((t - base, d) for t, d in results) if start <= t < start + 10)
            print(f"  {start:4d}–{start + 10:<4d} s: {row}   median {np.median(chunk) if chunk else float('nan'):5.1f}")
        if left_out:
            print(f"not judged: the bursts at {left_out} s, when the host took over {a.max_steal:.0%} of the CPUs (and 2 s after)")
        summary = {
            "devices": a.devices, "bursts": len(results), "missing_outside_load": missing, "missing_in_load": missing_loaded,
            "not_judged_host_busy": len(left_out),
            "median_ms": float(np.median(values)) if len(values) else None,
            "first20_ms": float(np.median(first)) if len(first) else None,
            "last20_ms": float(np.median(last)) if len(last) else None,
            "first20_at_s": [round(judged[0][0]), round(judged[min(window, len(judged)) - 1][0])] if judged else None,
            "last20_at_s": [round(judged[-window][0]), round(judged[-1][0])] if last.size else None,
            "first20_p10_ms": float(np.percentile(first, 10)) if len(first) else None,
            "last20_p10_ms": float(np.percentile(last, 10)) if len(last) else None,
        }
        drift = abs(summary["last20_p10_ms"] - summary["first20_p10_ms"]) if first.size and last.size else None
        summary["drift_ms"] = drift
        print("earshot listen said:\n" + "\n".join("  " + l for l in log.strip().splitlines()))
        print("summary: " + json.dumps(summary))
        if a.json:
            json.dump({"summary": summary, "delays": delays}, open(a.json, "w"), indent=1)
        failures = []
        expected = int((a.seconds - 1.0) / 1.0)
        if len(results) < expected - 1:
            failures.append(f"only {len(results)} of {expected} bursts were recorded going in")
        if missing:
            failures.append(f"bursts lost outside the loaded window at {missing} s")
        # A burst lost is a failure however busy the host was; a median or a drift needs enough
        # bursts judged to mean anything (a median of four, next to a stolen stretch, once read 30.4 ms).
        if not failures and last.size == 0:
            print(f"only {len(judged)} bursts could be judged, too few to tell a median or a drift (at least {2 * window})")
            return None
        if summary["median_ms"] is None or (not two and summary["median_ms"] > a.max_median_ms):
            failures.append(f"median added delay {summary['median_ms']} ms > {a.max_median_ms} ms")
        drifting = last.size and (drift is None or drift > a.max_drift_ms)
        if drifting:
            failures.append(f"delay over the last 20 bursts (10th percentile) differs from the first 20 by {drift} ms > {a.max_drift_ms} ms")
        if failures:
            print("FAIL: " + "; ".join(failures))
            return DRIFT_ONLY if drifting and len(failures) == 1 else 1
        print("PASS: live delay bounded")
        return 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())

"""Real sounds heard more than once: the development set of `make eval-sounds`.

Each sound is a list of takes: real recordings of the same source at other moments (ProtoSound's
user recordings of one smoke alarm, one door's knocks and one baby's cries; the slices of one
UrbanSound8K car-horn recording; stretches of one long smoke-alarm recording, cut at other points),
or one sound file re-recorded: played through a small loudspeaker into measured and simulated
rooms at other distances, picked up by another microphone, and cut at another point. A sound is
enrolled from its first take and looked for as the others.

Sounds are split in two by kind of source, not by take: `tune` is what thresholds and features may
be chosen on; `held-out` is only measured. Everything is seeded.
"""
import glob
import os

import numpy as np
import scipy.signal
import soxr

from training.realaudio import RATE, load


def synthetic_rir(rng, rt60):
    """Exponentially decaying noise with a direct path: a room of the given RT60."""
    n = int(rt60 * RATE)
    t = np.arange(n) / RATE
    tail = rng.standard_normal(n) * np.exp(-6.9 * t / rt60)
    rir = tail * rng.uniform(0.1, 0.5)
    rir[0] = 1.0
    return rir / np.sqrt(np.sum(rir ** 2))


class Rooms:
    """Measured room responses (IoSR office, each ear and azimuth; the seminar room) and
    simulated ones of RT60 0.2–0.9 s."""

    def __init__(self, data, rng):
        self.measured = []
        for path in sorted(glob.glob(f"{data}/rir/iosr_room_a/*.wav"))[::2]:
            import soundfile
            x, rate = soundfile.read(path, dtype="float64", always_2d=True)
            for ear in range(x.shape[1]):
                self.measured.append(x[:, ear] if rate == RATE else soxr.resample(x[:, ear], rate, RATE))
        seminar = f"{data}/rir/seminar_room_clap_mono.wav"
        if os.path.exists(seminar):
            self.measured.append(load(seminar))
        self.rng = rng

    def any(self):
        if self.measured and self.rng.random() < 0.6:
            return self.measured[self.rng.integers(len(self.measured))]
        return synthetic_rir(self.rng, self.rng.uniform(0.2, 0.9))


def loudspeaker(rng, x):
    """A small loudspeaker: no bass, a rolled-off top, a resonance, and some saturation."""
    low = rng.uniform(150, 450)
    high = rng.uniform(4500, 7500)
    sos = scipy.signal.butter(2, [low, high], btype="bandpass", fs=RATE, output="sos")
    y = scipy.signal.sosfilt(sos, x)
    f0, gain = rng.uniform(600, 3000), rng.uniform(-6, 6)
    b, a = scipy.signal.iirpeak(f0, 2.0, fs=RATE)
    y = y + (10 ** (gain / 20) - 1) * scipy.signal.lfilter(b, a, y)
    drive = rng.uniform(1, 4)
    y = np.tanh(drive * y / (np.abs(y).max() + 1e-12)) / np.tanh(drive)
    return y


def microphone(rng, x):
    """Another microphone: a tilt either way and its own band limits."""
    alpha = rng.uniform(-0.6, 0.6)
    y = x.copy()
    y[1:] += alpha * x[:-1]
    sos = scipy.signal.butter(1, rng.uniform(60, 200), btype="highpass", fs=RATE, output="sos")
    return scipy.signal.sosfilt(sos, y)


def rerecorded(rng, rooms, clip, speaker=True, near=False):
    """A sound file played again and recorded again: through a loudspeaker (when `speaker`),
    a room (a short, direct one when `near`), another microphone, cut at another point: it may
    start up to a quarter of a second into the sound."""
    x = loudspeaker(rng, clip) if speaker else clip
    if near:
        rir = synthetic_rir(rng, rng.uniform(0.1, 0.25))
        rir[0] *= 4
    else:
        rir = rooms.any()
    y = np.convolve(x, rir)[: len(x) + RATE // 2]
    y = microphone(rng, y)
    cut = int(rng.uniform(0, 0.25) * RATE) if not near else 0
    return y[cut:]


def sound_file_takes(rng, rooms, clip, takes):
    """Take 0 is the enrollment: recorded near the source. The others, elsewhere."""
    return [rerecorded(rng, rooms, clip, near=True)] + [rerecorded(rng, rooms, clip) for _ in range(takes - 1)]


def stretches(rng, x, seconds, count):
    """`count` stretches of one long recording, each cut at its own point."""
    n = int(seconds * RATE)
    starts = np.sort(rng.choice(max(1, len(x) - n), size=count, replace=False))
    return [x[s:s + n] for s in starts]


def sounds(data, earshot=None, work=None, seed=59):
    """{name: {"takes": [...], "group": "tune" | "held-out", "kind": ..., "real": bool}} for
    whatever of the shared data is present."""
    rng = np.random.default_rng(seed)
    rooms = Rooms(data, rng)
    out = {}
    proto = f"{data}/sounds/protosound"

    def add(name, takes, group, kind, real):
        if len(takes) >= 2:
            out[name] = {"takes": takes, "group": group, "kind": kind, "real": real}

    # Real re-recordings: a user's recordings of one source.
    add("bedroom_smoke_alarm", [load(p) for p in sorted(glob.glob(f"{proto}/fire_alarm/bedroom_fire_alarn_user_*.wav"))],
        "tune", "alarm", True)
    for room in ("bedroom", "computer", "kitchen", "knocking", "newtest", "newtest2", "newtest4", "newtest5"):
        paths = sorted(glob.glob(f"{proto}/knock/{room}_knocking_user_*.wav"))
        if room == "knocking":
            paths = sorted(glob.glob(f"{proto}/knock/knocking_user_*.wav"))
        add(f"knock_{room}", [load(p) for p in paths], "tune" if room in ("bedroom", "computer", "kitchen", "knocking") else "held-out",
            "knock", True)
    for room in ("bedroom", "computer"):
        add(f"baby_cry_{room}", [load(p) for p in sorted(glob.glob(f"{proto}/baby_cry/{room}_baby_crying_user_*.wav"))],
            "tune" if room == "bedroom" else "held-out", "cry", True)
    # One long real alarm recording, heard again from another point of it.
    for path in sorted(glob.glob(f"{data}/alarms/*.wav")):
        name = os.path.basename(path)[:-4]
        add(name, stretches(rng, load(path), 3.0, 5), "tune" if "0800" in name else "held-out", "alarm", True)
    # The slices of one street recording of a car horn: the same horn at other moments.
    horns = {}
    for path in sorted(glob.glob(f"{data}/alerts/urbansound8k/car_horn/*.flac")):
        horns.setdefault(os.path.basename(path).split("-")[0], []).append(path)
    for recording, paths in sorted(horns.items()):
        if len(paths) >= 3:
            add(f"car_horn_{recording}", [load(p) for p in paths[:5]], "held-out", "horn", True)
    # Sound files re-recorded: doorbells and appliance tones.
    for path in sorted(glob.glob(f"{proto}/doorbell/*.wav")):
        add(f"doorbell_{os.path.basename(path)[-5]}", sound_file_takes(rng, rooms, load(path), 5), "held-out", "doorbell", False)
    for path in sorted(glob.glob(f"{proto}/appliances/*.wav")):
        add(f"appliance_{os.path.basename(path)[-5]}", sound_file_takes(rng, rooms, load(path), 5), "held-out", "appliance", False)
    if earshot and work:
        import subprocess
        for seed in range(1, 6):
            path = f"{work}/synth_doorbell_{seed}.wav"
            subprocess.run([earshot, "synth", "alert", "--class", "doorbell", "--seed", str(100 + seed), "--rate", str(RATE), "-o", path],
                           check=True, capture_output=True)
            add(f"synth_doorbell_{seed}", sound_file_takes(rng, rooms, load(path), 5), "tune", "doorbell", False)
    return out



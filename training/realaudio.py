"""Real recordings for the alert detector: speaker- and clip-disjoint splits, and seeded mixtures.

Training and the evaluation (eval/detect) draw from the same folders of ../shared/data, never from
the same speakers or clips:
  * LibriSpeech: by speaker (the first number of the file name), 30 % of speakers for development;
  * ProtoSound and Donate-a-Cry: by clip, or by recording session where one person recorded the
    same sound several times (`bedroom_fire_alarn_user_*` is one alarm in one room);
  * the background recordings (dishes, tap, bike, cat): the first 70 % of each for training, the
    rest for development (they are single long takes; there are only four);
  * the four whole alarm recordings in alarms/: development only;
  * UrbanSound8K (`UrbanBank`): by source recording (the first number of the file name), three
    ways: training, development and evaluation (`make eval-detect`, never trained on or tuned with).
Synthetic alerts (`earshot synth alert`) are drawn from disjoint seed ranges per split, and
music-like beds are synthesised here from disjoint seeds.
"""
import glob
import io
import os
import re
import subprocess
import zlib

import numpy as np
import scipy.signal
import soundfile as sf
import soxr

RATE = 16_000
ALERTS = ["siren", "smoke_alarm", "car_horn", "doorbell"]
MUSIC_KINDS = ("music", "tv")  # the kinds of `background` with music in them
REAL = "real "  # before a kind whose music is a real soundtrack (make_realset.py)
TONAL = "tonal "  # before a kind whose music is tonal_music.py's
URBAN = "urban "  # before a kind whose bed is UrbanSound8K's street music or urban sound
DEV_SHARE = 3  # of 10


def is_dev(key):
    return zlib.crc32(key.encode()) % 10 < DEV_SHARE


def load(path):
    x, rate = sf.read(path, dtype="float64", always_2d=True)
    x = x.mean(axis=1)
    return soxr.resample(x, rate, RATE) if rate != RATE else x


def session(path):
    """Recordings made in one sitting share a key: `bedroom_knocking_user_3.wav` -> bedroom_knocking_user."""
    name = os.path.basename(path)[:-4]
    if "_user_" in name:
        return re.sub(r"_\d+$", "", name)
    return name


# Sessions kept for development whatever their hash, so that it holds every real alert class: the
# only smoke alarm a user recorded in a room, two library sirens and two library doorbells.
DEV_SESSIONS = {"bedroom_fire_alarn_user", "siren_lib_3", "siren_lib_4", "doorbell_lib_3", "doorbell_lib_4"}
TRAIN_SESSIONS = {f"fire_alarm_lib_{i}" for i in range(5)} | {f"{c}_lib_{i}" for c in ("siren", "doorbell") for i in range(3)}

PROTOSOUND_CLASS = {"siren": "siren", "fire_alarm": "smoke_alarm", "car_horn": "car_horn", "doorbell": "doorbell"}
PROTOSOUND_NEGATIVE = ["knock", "baby_cry", "appliances"]


class Bank:
    """Every real recording of one split, 16 kHz mono, in memory."""

    def __init__(self, data, split):
        assert split in ("train", "dev")
        self.split = split
        dev = split == "dev"

        def mine(key):
            if key in DEV_SESSIONS:
                return dev
            if key in TRAIN_SESSIONS:
                return not dev
            return is_dev(key) == dev

        speech = sorted(glob.glob(os.path.join(data, "speech", "librispeech", "*.flac")))
        self.speech = [load(p) for p in speech if mine("speaker" + os.path.basename(p).split("-")[0])]
        self.speakers = sorted({os.path.basename(p).split("-")[0] for p in speech
                                if mine("speaker" + os.path.basename(p).split("-")[0])})
        self.noise = []
        for p in sorted(glob.glob(os.path.join(data, "noise", "*.wav"))):
            x = load(p)
            cut = int(0.7 * len(x))
            self.noise.append(x[cut:] if dev else x[:cut])
        self.events = []  # real sounds that are not alerts
        for kind in PROTOSOUND_NEGATIVE:
            for p in sorted(glob.glob(os.path.join(data, "sounds", "protosound", kind, "*.wav"))):
                if mine(session(p)):
                    self.events.append(load(p))
        for p in sorted(glob.glob(os.path.join(data, "sounds", "donateacry", "*.wav"))):
            if mine(session(p)):
                self.events.append(load(p))
        self.alerts = {c: [] for c in ALERTS}
        for folder, c in PROTOSOUND_CLASS.items():
            for p in sorted(glob.glob(os.path.join(data, "sounds", "protosound", folder, "*.wav"))):
                if mine(session(p)):
                    self.alerts[c].append(trim(load(p)))
        if dev:
            for p in sorted(glob.glob(os.path.join(data, "alarms", "*.wav"))):
                self.alerts["smoke_alarm"].append(trim(load(p)))
        rirs = sorted(glob.glob(os.path.join(data, "rir", "iosr_room_a", "*.wav")))
        self.rooms = [load_rir(p) for i, p in enumerate(rirs) if (i % 2 == 1) == dev]
        clap = os.path.join(data, "rir", "seminar_room_clap_mono.wav")
        if dev and os.path.exists(clap):
            self.rooms.append(load_rir(clap))

    def __bool__(self):
        return bool(self.speech) and bool(self.noise)


# The suppressor is judged on noise *kinds* it never hears in training: it trains on these
# UrbanSound8K kinds (every recording of them) and is developed on the others, and on the
# Speech Commands noise recordings, which it never trains on at all.
SUPPRESSOR_TRAIN_URBAN = ("air_conditioner", "children_playing", "drilling", "engine_idling", "jackhammer")
SUPPRESSOR_UNSEEN_URBAN = ("dog_bark", "gun_shot", "street_music")


def urban_kind(data, kind):
    """Every slice of one UrbanSound8K background kind (CC BY-NC 3.0), loud enough to hear."""
    out = []
    for p in sorted(glob.glob(os.path.join(data, "noise", "urbansound8k", kind, "*.flac"))):
        x = load(p)
        if 20 * np.log10(rms(x)) > -50:
            out.append(x)
    return out


URBAN_SPLITS = ("train", "dev", "eval")
# Slices UrbanSound8K labels as sirens that other tones drown (SOURCES.md).
URBAN_DROWNED = ("121528-8-1-", "74364-8-1-", "159747-8-0-19.")
URBAN_NOISE = ("air_conditioner", "children_playing", "dog_bark", "drilling", "engine_idling", "gun_shot", "jackhammer")


def urban_split(path):
    """train, dev or eval for an UrbanSound8K file, by its source recording: 60/20/20 of the
    recordings (25 siren recordings fall 14/6/5)."""
    h = zlib.crc32(("urban " + urban_recording(path)).encode()) % 10
    return "train" if h < 6 else "dev" if h < 8 else "eval"


def faded(x, seconds=0.01):
    """x with linear fades in and out, so that pieces laid end to end do not click."""
    n = np.arange(len(x))
    return x * np.minimum(1, np.minimum(n, n[::-1]) / (seconds * RATE))


def urban_recording(path):
    return os.path.basename(path).split("-")[0]


class UrbanBank:
    """UrbanSound8K's real street recordings of one split (CC BY-NC 3.0: non-commercial), 16 kHz
    mono: siren and car-horn slices (those audible, above -50 dBFS, and not drowned by other
    tones), street music, and the other urban backgrounds; each a list of (recording, array)."""

    def __init__(self, data, split, audible_db=-50):
        assert split in URBAN_SPLITS
        self.split = split

        def slices(folder, keep=lambda p, x: True):
            out = []
            for p in sorted(glob.glob(os.path.join(data, folder, "*.flac"))):
                if urban_split(p) == split and not os.path.basename(p).startswith(URBAN_DROWNED):
                    x = load(p)
                    if keep(p, x):
                        out.append((urban_recording(p), x))
            return out

        audible = lambda p, x: 20 * np.log10(rms(x)) > audible_db  # noqa: E731
        self.sirens = slices(os.path.join("alerts", "urbansound8k", "siren"), audible)
        self.horns = slices(os.path.join("alerts", "urbansound8k", "car_horn"), audible)
        self.music = slices(os.path.join("noise", "urbansound8k", "street_music"))
        self.noise = [s for kind in URBAN_NOISE for s in slices(os.path.join("noise", "urbansound8k", kind))]
        self.alerts = {"siren": self.sirens, "car_horn": self.horns}

    def __bool__(self):
        return bool(self.sirens) and bool(self.music) and bool(self.noise)

    def bed(self, rng, n, pool):
        """`n` samples of slices from `pool` one after another (10 ms cross-fades), another
        under them half the time."""
        out = np.zeros(n)
        for layer in range(1 + (rng.random() < 0.5)):
            t, pieces = 0, []
            while t < n:
                x = pool[int(rng.integers(len(pool)))][1]
                x = x / (rms(x) + 1e-12)
                pieces.append(faded(x))
                t += len(x)
            out += np.concatenate(pieces)[:n] * (1 if layer == 0 else 10 ** (rng.uniform(-15, -3) / 20))
        return out

    def alert(self, rng, klass):
        """A real siren or horn: one slice, or two of one recording back to back (8 s)."""
        pool = self.alerts[klass]
        recording, x = pool[int(rng.integers(len(pool)))]
        if rng.random() < 0.5:
            others = [y for r, y in pool if r == recording and y is not x]
            if others:
                x = np.concatenate([x, others[int(rng.integers(len(others)))]])
        return x


def load_rir(path):
    x, rate = sf.read(path, dtype="float64", always_2d=True)
    x = x[:, 0]
    if rate != RATE:
        x = soxr.resample(x, rate, RATE)
    start = max(0, int(np.argmax(np.abs(x))) - 16)
    x = x[start:]
    return x / np.sqrt(np.sum(x ** 2))


def trim(x, within_db=30):
    """The part of a clip within `within_db` of its loudest 10 ms."""
    s, e = active_span(x, within_db)
    return x[s:e]


def active_span(x, within_db=20):
    """First to last 10 ms window within `within_db` of the loudest, in samples. (Recordings carry
    room tone and handling noise before an alarm starts, 25-35 dB down: 20 dB finds the alarm.)"""
    window = RATE // 100
    energy = np.array([np.sum(x[i:i + window] ** 2) for i in range(0, len(x), window)])
    if energy.max() <= 0:
        return 0, len(x)
    loud = np.nonzero(energy >= energy.max() * 10 ** (-within_db / 10))[0]
    return loud[0] * window, min(len(x), (loud[-1] + 1) * window)


def rms(x):
    return float(np.sqrt(np.mean(x ** 2) + 1e-20))


def loud_half_rms(x):
    """RMS over the loudest half of 20 ms frames: a sound's level, not its silences'."""
    frames = x[: len(x) // 320 * 320].reshape(-1, 320)
    energy = np.sort((frames ** 2).mean(axis=1))
    return float(np.sqrt(energy[len(energy) // 2:].mean() + 1e-12))


# --- synthetic alerts ---------------------------------------------------------------------

SYNTHETIC_SEEDS = {"train": 1, "dev": 500_000, "eval": 900_000}


def synthetic_alerts(earshot, folder, split, per_class, jobs=2):
    """`per_class` seeded alerts of each class from `earshot synth alert` (seeds disjoint per
    split: training, development, evaluation), cached as files; returns {class: [arrays]}."""
    import concurrent.futures
    os.makedirs(folder, exist_ok=True)
    base = SYNTHETIC_SEEDS[split]
    work = []
    for ci, c in enumerate(ALERTS):
        for i in range(per_class):
            seed = base + ci * 100_000 + i
            work.append((c, seed, os.path.join(folder, f"{c}_{seed}.wav")))

    def make(item):
        c, seed, path = item
        if not os.path.exists(path):
            subprocess.run([earshot, "synth", "alert", "--class", c, "--seed", str(seed), "--seconds", "8",
                            "-o", path + ".tmp.wav"], check=True, stderr=subprocess.DEVNULL)
            os.replace(path + ".tmp.wav", path)
        return c, path

    out = {c: [] for c in ALERTS}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for c, path in pool.map(make, work):
            x, _ = sf.read(path, dtype="float32")
            out[c].append(x)
    return out


# --- music-like beds ----------------------------------------------------------------------

def music(rng, seconds):
    """A seeded piece of music-like sound: chords and a melody on plucked, struck, bowed and
    sung voices (vibrato, formants), drums, tempo 60-170 bpm. Sustained vibrato notes and
    struck bells are what a tonal alert detector confuses most."""
    n = int(seconds * RATE)
    out = np.zeros(n)
    beat = 60 / rng.uniform(60, 170)
    root = rng.uniform(110, 330)
    scale = np.array([0, 2, 4, 5, 7, 9, 11]) if rng.random() < 0.6 else np.array([0, 2, 3, 5, 7, 8, 10])

    def note_freq(step, octave=0):
        return root * 2 ** ((scale[step % 7] + 12 * (step // 7 + octave)) / 12)

    def voice(kind, f, length):
        m = int(length * RATE)
        t = np.arange(m) / RATE
        if kind == "pluck":  # Karplus-Strong
            period = max(2, int(RATE / f))
            buf = rng.uniform(-1, 1, period)
            y = np.empty(m)
            for i in range(m):
                y[i] = buf[i % period]
                buf[i % period] = 0.996 * 0.5 * (buf[i % period] + buf[(i + 1) % period])
            return y
        vib = 0
        if kind in ("bowed", "sung", "lead"):
            vib = rng.uniform(0.003, 0.015) * np.sin(2 * np.pi * rng.uniform(4, 7) * t) * np.minimum(1, t / 0.3)
        if kind == "lead":  # a synthesiser or a voice bending into the note
            bend = 2 ** (rng.uniform(-3, 3) / 12) - 1
            vib = vib + bend * np.exp(-t / rng.uniform(0.02, 0.15))
        phase = 2 * np.pi * f * np.cumsum(1 + vib) / RATE
        harmonics = rng.integers(3, 12)
        amps = 1 / np.arange(1, harmonics + 1) ** rng.uniform(0.6, 2.0)
        y = sum(a * np.sin(k * phase) for k, a in zip(range(1, harmonics + 1), amps) if k * f < RATE / 2 - 200)
        if kind == "struck":  # piano/bell: fast attack, exponential decay, a little inharmonic ring
            y = y * np.exp(-t / rng.uniform(0.2, 1.5)) + 0.3 * np.sin(2 * np.pi * f * 2.76 * t) * np.exp(-t / 0.3)
        else:
            attack = rng.uniform(0.02, 0.25)
            y = y * np.minimum(1, t / attack) * np.minimum(1, (length - t) / 0.08).clip(0)
        if kind == "sung":  # two formants
            for centre in (rng.uniform(400, 900), rng.uniform(1000, 2600)):
                b, a = scipy.signal.iirpeak(centre, 4, RATE)
                y = y + 2 * scipy.signal.lfilter(b, a, y)
        return y

    kinds = list(rng.choice(["pluck", "struck", "bowed", "organ", "sung", "lead"], size=2, replace=False))
    # Chords: one per bar of four beats.
    bar = 4 * beat
    t = 0.0
    while t < seconds:
        degree = int(rng.integers(0, 7))
        for step in (degree, degree + 2, degree + 4):
            y = voice(kinds[0], note_freq(step), min(bar, seconds - t))
            s = int(t * RATE)
            out[s:s + len(y)] += 0.25 * y[:n - s]
        t += bar
    # Melody.
    t = 0.0
    step = int(rng.integers(7, 12))
    while t < seconds:
        length = beat * rng.choice([0.5, 1, 1, 2])
        step = int(np.clip(step + rng.integers(-2, 3), 5, 16))
        if rng.random() < 0.85:
            y = voice(kinds[1], note_freq(step), min(length, seconds - t))
            s = int(t * RATE)
            out[s:s + len(y)] += 0.4 * y[:n - s]
        t += length
    # Drums.
    if rng.random() < 0.7:
        for k in range(int(seconds / beat * 2)):
            s = int(k * beat / 2 * RATE)
            if s >= n:
                break
            m = min(n - s, int(0.25 * RATE))
            tt = np.arange(m) / RATE
            if k % 4 == 0:
                out[s:s + m] += 0.8 * np.sin(2 * np.pi * (50 + 100 * np.exp(-tt / 0.03)) * tt) * np.exp(-tt / 0.12)
            elif k % 4 == 2:
                out[s:s + m] += 0.4 * rng.standard_normal(m) * np.exp(-tt / 0.06)
            hat = min(m, int(0.05 * RATE))
            out[s:s + hat] += 0.1 * np.diff(rng.standard_normal(hat + 1)) * np.exp(-tt[:hat] / 0.015)
    return out / (rms(out) + 1e-12) * 0.1


# --- mixing -------------------------------------------------------------------------------

def segment(rng, x, n):
    if len(x) >= n:
        s = int(rng.integers(0, len(x) - n + 1))
        return x[s:s + n].copy()
    return np.resize(x, n)


def speech_track(rng, bank, n, talkers=1):
    """Utterances of random speakers one after another, with pauses, pitch/tempo-shifted a little."""
    out = np.zeros(n)
    for _ in range(talkers):
        t = int(rng.uniform(-2, 1) * RATE)
        while t < n:
            clip = bank.speech[int(rng.integers(len(bank.speech)))]
            start = int(rng.integers(0, max(1, len(clip) - 3 * RATE)))
            clip = clip[start:start + int(rng.uniform(2, 8) * RATE)]
            if rng.random() < 0.4:
                clip = soxr.resample(clip, RATE, RATE * rng.uniform(0.85, 1.18))
            clip = clip / (rms(clip) + 1e-12) * 10 ** (rng.uniform(-4, 4) / 20)
            a, b = max(0, t), min(n, t + len(clip))
            if b > a:
                out[a:b] += clip[a - t:b - t]
            t += len(clip) + int(rng.uniform(0.1, 1.2) * RATE)
    return out


def synthetic_rir(rng):
    rt60 = rng.uniform(0.15, 1.0)
    m = int(min(1.2, rt60) * RATE)
    t = np.arange(m) / RATE
    h = rng.standard_normal(m) * np.exp(-6.9 * t / rt60)
    h[:int(rng.uniform(0.001, 0.01) * RATE)] = 0
    h[0] = rng.uniform(1, 6) * np.sqrt(np.sum(h ** 2) / 50)  # direct path
    b, a = scipy.signal.butter(1, rng.uniform(3000, 7500), fs=RATE)
    h = scipy.signal.lfilter(b, a, h)
    return h / np.sqrt(np.sum(h ** 2))


def through_room(rng, bank, x):
    h = bank.rooms[int(rng.integers(len(bank.rooms)))] if bank.rooms and rng.random() < 0.5 else synthetic_rir(rng)
    return scipy.signal.fftconvolve(x, h)[:len(x)]


def colour(rng, x):
    """A microphone's and a channel's colour: tilt, a few peaks and dips, a band limit."""
    for _ in range(int(rng.integers(0, 4))):
        f = rng.uniform(150, 6000)
        gain = rng.uniform(-8, 8)
        b, a = peaking(f, gain, rng.uniform(0.7, 3))
        x = scipy.signal.lfilter(b, a, x)
    r = rng.random()
    if r < 0.15:  # telephone/codec band
        b, a = scipy.signal.butter(4, [300, 3400], btype="band", fs=RATE)
        x = scipy.signal.lfilter(b, a, x)
    elif r < 0.35:
        b, a = scipy.signal.butter(4, rng.uniform(3800, 7500), fs=RATE)
        x = scipy.signal.lfilter(b, a, x)
    if rng.random() < 0.5:
        b, a = scipy.signal.butter(2, rng.uniform(40, 250), btype="high", fs=RATE)
        x = scipy.signal.lfilter(b, a, x)
    return x


def peaking(f, gain_db, q):
    a = 10 ** (gain_db / 40)
    w = 2 * np.pi * f / RATE
    alpha = np.sin(w) / (2 * q)
    b = np.array([1 + alpha * a, -2 * np.cos(w), 1 - alpha * a])
    d = np.array([1 + alpha / a, -2 * np.cos(w), 1 - alpha / a])
    return b / d[0], d / d[0]


def background(rng, bank, n, music_bank=None, scenes=None, kind=None, piece=None):
    """Real alert-free audio of one kind (drawn unless given): speech, noisy speech, babble,
    household sounds, music (music-like, real tracks from `music_bank`, or pieces from `piece`,
    a function of (rng, seconds)), TV (speech over music), or several at once."""
    if kind is None:
        kind = rng.choice(["speech", "noisy_speech", "babble", "household", "music", "tv", "quiet"],
                          p=[0.2, 0.2, 0.1, 0.15, 0.15, 0.12, 0.08])
    noise = segment(rng, bank.noise[int(rng.integers(len(bank.noise)))], n)
    noise = noise / (rms(noise) + 1e-12)
    bed = np.zeros(n)
    if kind in ("speech", "noisy_speech", "tv"):
        bed += speech_track(rng, bank, n)
    if kind == "babble":
        bed += speech_track(rng, bank, n, talkers=int(rng.integers(3, 7)))
    if kind in MUSIC_KINDS:
        # A new piece each time unless a bank of pieces is given.
        if music_bank:
            tune = segment(rng, music_bank[int(rng.integers(len(music_bank)))], n)
            tune = tune / (rms(tune) + 1e-12) * 0.1
        elif piece:
            tune = piece(rng, n / RATE)
        else:
            tune = music(rng, n / RATE)
        bed += tune / 0.1 * 10 ** (rng.uniform(-10, 0) / 20)
    if kind == "household" or rng.random() < 0.25:
        bed += events_track(rng, bank, n)
    if scenes and rng.random() < 0.2:  # traffic-like, machinery, synthetic music from the scene generator
        s = segment(rng, scenes[int(rng.integers(len(scenes)))], n)
        bed += s / (rms(s) + 1e-12) * 10 ** (rng.uniform(-12, 0) / 20)
    if rng.random() < 0.5:
        bed = through_room(rng, bank, bed)
    level = rms(bed) if rms(bed) > 1e-6 else 1.0
    snr = {"speech": rng.uniform(15, 40), "noisy_speech": rng.uniform(-5, 15), "quiet": 0}.get(kind, rng.uniform(0, 25))
    if kind == "quiet":
        bed = noise * 10 ** (rng.uniform(-30, 0) / 20) + bed
    else:
        bed = bed + noise * level * 10 ** (-snr / 20)
    return bed, str(kind)


def events_track(rng, bank, n):
    out = np.zeros(n)
    for _ in range(int(rng.integers(1, 4))):
        e = bank.events[int(rng.integers(len(bank.events)))]
        if rng.random() < 0.3:
            e = soxr.resample(e, RATE, RATE * rng.uniform(0.8, 1.25))
        e = e[:n]
        s = int(rng.integers(0, max(1, n - len(e))))
        out[s:s + len(e)] += e / (rms(e) + 1e-12) * 10 ** (rng.uniform(-6, 6) / 20)
    return out


def as_sounded(rng, alert, klass):
    """Variety that real alerts have and the synthetic ones lack (training only): another pitch
    and tempo together (a resampled copy; sirens differ most from model to model), and for
    sirens and car horns a horn loudspeaker's band (little fundamental) and its distortion."""
    if rng.random() < 0.5:
        low, high = (0.7, 1.45) if klass == "siren" else (0.85, 1.2)
        alert = soxr.resample(alert, RATE * rng.uniform(low, high), RATE)
    if klass in ("siren", "car_horn") and rng.random() < 0.4:
        b, a = scipy.signal.butter(2, rng.uniform(250, 800), btype="high", fs=RATE)
        alert = scipy.signal.lfilter(b, a, alert)
        drive = rng.uniform(1.5, 10)
        alert = np.tanh(drive * alert / (np.abs(alert).max() + 1e-12)) / np.tanh(drive)
    return alert


def street_siren(rng, seconds):
    """An emergency vehicle's siren as a street recording holds it (training only), what `earshot
    synth alert` lacks: a mechanical wail that spins up, lingers at the top and runs down, or an
    electronic wail, yelp, hi-lo or piercer, often switching from one to another; a square-, saw-
    or rotor-like tone; passing by (Doppler, distance) and echoed by the buildings."""
    n = int(seconds * RATE)
    low = rng.uniform(400, 900)
    high = low * rng.uniform(1.5, 2.6)
    f = np.empty(n)
    i = 0
    while i < n:
        pattern = rng.choice(["mechanical", "wail", "yelp", "hi-lo", "piercer"], p=[0.3, 0.3, 0.2, 0.12, 0.08])
        part = n if rng.random() < 0.6 else int(rng.uniform(1.0, 4.0) * RATE)
        f[i:i + part] = sweep(rng, pattern, low, high, min(part, n - i))
        i += part
    tone = rng.choice(["square", "saw", "rotor"])
    harmonics = np.arange(1, 16)
    if tone == "square":
        harmonics = harmonics[harmonics % 2 == 1]
    amps = 1 / harmonics ** (1.0 if tone != "rotor" else rng.uniform(0.5, 1.5))
    # Passing by: speed, closest distance and when; frequency c / (c + radial speed), level 1 / r.
    speed, closest = rng.uniform(0, 25), rng.uniform(5, 80)
    t = np.arange(n) / RATE
    x = speed * (t - rng.uniform(-0.5, 1.5) * seconds)
    r = np.sqrt(x ** 2 + closest ** 2)
    f = f * 343 / (343 + np.gradient(r) * RATE)
    phase = 2 * np.pi * np.cumsum(f) / RATE
    y = sum(a * np.sin(k * phase) * (k * f < RATE / 2 - 200) for k, a in zip(harmonics, amps))
    if tone == "rotor":  # the chopped air of a mechanical siren: noise riding on the tone
        y = y * (1 + 0.3 * rng.standard_normal(n))
    y = y * closest / r
    if rng.random() < 0.5:  # far away: the air takes the highs
        b, a = scipy.signal.butter(2, rng.uniform(2000, 6000), fs=RATE)
        y = scipy.signal.lfilter(b, a, y)
    for _ in range(int(rng.integers(0, 4))):  # reflections off buildings
        d = int(rng.uniform(0.02, 0.3) * RATE)
        y[d:] += rng.uniform(0.2, 0.6) * y[:-d]
    return y / (np.abs(y).max() + 1e-12)


def sweep(rng, pattern, low, high, n):
    """A siren's frequency over n samples, from a random point in its cycle."""
    t = np.arange(n) / RATE + rng.uniform(0, 10)
    if pattern == "mechanical":  # spins up towards the top, lingers, runs down slowly
        up, down = rng.uniform(1.5, 4), rng.uniform(2, 6)
        rise, fall = rng.uniform(0.3, 1.2), rng.uniform(0.8, 3)
        c = t % (up + down)
        top = low + (high - low) * (1 - np.exp(-up / rise))
        return np.where(c < up, low + (high - low) * (1 - np.exp(-c / rise)),
                        low + (top - low) * np.exp(-(c - up) / fall))
    if pattern in ("wail", "yelp", "piercer"):
        cycle = {"wail": rng.uniform(2.5, 8), "yelp": rng.uniform(0.15, 0.5), "piercer": rng.uniform(0.05, 0.12)}[pattern]
        rising = rng.uniform(0.3, 0.6)
        c = (t / cycle) % 1
        shape = np.where(c < rising, c / rising, (1 - c) / (1 - rising))
        if rng.random() < 0.5:  # a rounded sweep instead of a straight one
            shape = 0.5 - 0.5 * np.cos(np.pi * shape)
        return low + (high - low) * shape
    cycle = rng.uniform(0.8, 2.0)  # hi-lo
    return np.where((t / cycle) % 1 < 0.5, low * rng.uniform(1.2, 1.5), low)


def traffic(rng, n):
    """Street noise under a passing siren: engine rumble (a low fundamental and its harmonics),
    tyres (band noise), all swelling and fading as vehicles pass; unit RMS."""
    t = np.arange(n) / RATE
    rumble = scipy.signal.lfilter([1], [1, -0.995], rng.standard_normal(n))
    engine = rng.uniform(25, 70) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(0.05, 0.3) * t))
    phase = 2 * np.pi * np.cumsum(engine) / RATE
    rumble = rumble / rms(rumble) + sum(np.sin(k * phase) / k for k in range(1, 12))
    b, a = scipy.signal.butter(2, [rng.uniform(300, 700), rng.uniform(1500, 4000)], btype="band", fs=RATE)
    tyres = scipy.signal.lfilter(b, a, rng.standard_normal(n))
    swell = 1 + 0.8 * np.sin(2 * np.pi * rng.uniform(0.05, 0.25) * t + rng.uniform(0, 6.3))
    out = (rumble / rms(rumble) + rng.uniform(0.2, 1) * tyres / rms(tyres)) * swell
    return out / rms(out)


def lossy(rng, x):
    """`x` through a lossy codec and back (training only), as a phone's recording or a streamed
    video holds a sound: MP3 or Vorbis at a random quality. Neither shifts the signal in time."""
    form, subtype = (("MP3", "MPEG_LAYER_III"), ("OGG", "VORBIS"))[int(rng.integers(2))]
    coded = io.BytesIO()
    sf.write(coded, x.astype(np.float32), RATE, format=form, subtype=subtype,
             compression_level=float(rng.uniform(0.2, 0.95)))
    coded.seek(0)
    y, _ = sf.read(coded, dtype="float64")
    return np.pad(y[:len(x)], (0, max(0, len(x) - len(y))))


def repeated(clip, length, gap_seconds):
    """`clip` again and again, `gap_seconds` apart, for `length` samples: an alarm or a horn
    going on sounding."""
    pieces = [clip]
    while sum(map(len, pieces)) < length:
        pieces += [np.zeros(int(gap_seconds * RATE)), clip]
    return np.concatenate(pieces)[:length]


def place_alert(rng, bank, alert, bed, snr_db, start, room=True):
    """Adds `alert` to `bed` at `start` so that over its active span it is `snr_db` above what
    is under it; returns (mix, alert component as mixed)."""
    n = len(bed)
    if room and rng.random() < 0.6:
        alert = scipy.signal.fftconvolve(alert, bank.rooms[int(rng.integers(len(bank.rooms)))]
                                         if bank.rooms and rng.random() < 0.5 else synthetic_rir(rng))
    alert = alert[:n - start]
    s, e = active_span(alert)
    under = rms(bed[start + s:start + e])
    over = rms(alert[s:e])
    track = np.zeros(n)
    track[start:start + len(alert)] = alert * under / over * 10 ** (snr_db / 20)
    return bed + track, track


def finish(rng, mix, *tracks, colour_it=True, level_db=None):
    """Colour, level and (rarely) clipping applied alike to the mix and its components."""
    if colour_it:
        seed = int(rng.integers(1 << 31))
        mix = colour(np.random.default_rng(seed), mix)
        tracks = [colour(np.random.default_rng(seed), t) for t in tracks]
    level = 10 ** ((level_db if level_db is not None else rng.uniform(-45, -12)) / 20) / (rms(mix) + 1e-12)
    mix, tracks = mix * level, [t * level for t in tracks]
    peak = np.abs(mix).max()
    if peak > 0.99:
        if rng.random() < 0.5:
            mix = np.clip(mix, -0.99, 0.99)
        else:
            mix, tracks = mix * 0.99 / peak, [t * 0.99 / peak for t in tracks]
    return (mix, *tracks)

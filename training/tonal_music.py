"""Seeded tonal music: what a tonal alert detector must learn to leave alone.

Sirens, alarms, horns and chimes are tones, and so is most music: sustained notes with harmonics
and decays, chords, arpeggios, quick note sequences, two notes alternating (a trill, an ostinato
or a hi-lo figure), glissandi and vibrato, phone ringtones and jingles. `piece(rng, seconds)`
renders one piece in one or two of those styles on instrument-like voices (sine, square and
sawtooth synthesisers, organ, strings, brass, flute, plucked and struck strings, marimba, bells,
pads) at tempos of 50-200 bpm and registers from 80 Hz to 2.5 kHz.

Seeds are split by purpose, never shared: training draws from TRAIN_SEEDS, the development set
that chooses the operating point from DEV_SEEDS, and `make eval-detect` from EVAL_SEEDS.
"""
import numpy as np

RATE = 16_000
TRAIN_SEEDS = 10_000_000
DEV_SEEDS = 20_000_000
EVAL_SEEDS = 30_000_000
STYLES = ("sustained", "chords", "arpeggio", "runs", "alternating", "ringtone", "jingle", "glissando", "bells")
VOICES = ("sine", "square", "saw", "organ", "strings", "brass", "flute", "pluck", "piano", "marimba", "bell", "pad")
SUSTAINED_VOICES = ("sine", "square", "saw", "organ", "strings", "brass", "flute", "pad")
MAJOR, MINOR, PENTATONIC = [0, 2, 4, 5, 7, 9, 11], [0, 2, 3, 5, 7, 8, 10], [0, 2, 4, 7, 9]


def midi_hz(note):
    return 440.0 * 2 ** ((np.asarray(note, dtype=float) - 69) / 12)


class Voice:
    """One instrument-like timbre: a harmonic spectrum, an envelope, vibrato and inharmonicity."""

    def __init__(self, rng, kind):
        self.kind = kind
        self.rng = rng
        self.vibrato = (rng.uniform(0.002, 0.02) if kind in ("strings", "flute", "brass") or rng.random() < 0.25 else 0.0,
                        rng.uniform(4, 7.5))
        self.detune = rng.uniform(0.002, 0.008) if kind in ("pad", "saw") else 0.0
        self.brightness = rng.uniform(0.6, 1.6)

    def partials(self, f):
        """(ratio, amplitude, decay time or None) of each partial below 7.8 kHz."""
        k = np.arange(1, 40)
        kind = self.kind
        if kind == "sine":
            amps = np.array([1.0, 0.1 * self.brightness, 0.03])
            k = k[:3]
        elif kind == "square":
            amps = np.where(k % 2 == 1, 1 / k, 0.02 / k)
        elif kind in ("saw", "pad", "strings", "brass"):
            amps = 1 / k ** (1.0 / self.brightness)
        elif kind == "organ":
            amps = np.zeros(len(k))
            for h, a in ((1, 1.0), (2, 0.7), (3, 0.5), (4, 0.4), (6, 0.25), (8, 0.2)):
                amps[h - 1] = a * self.rng.uniform(0.5, 1.0)
        elif kind == "flute":
            amps = np.array([1.0, 0.35, 0.15, 0.05])
            k = k[:4]
        else:  # pluck, piano, marimba, bell: struck or plucked, each partial with its own decay
            amps = 1 / k ** (1.3 / self.brightness)
        ratios = k.astype(float)
        if kind == "piano":
            ratios = k * np.sqrt(1 + 0.0004 * k ** 2)
        elif kind == "marimba":
            ratios, amps = np.array([1.0, 3.93, 9.2]), np.array([1.0, 0.25, 0.05])
        elif kind == "bell":
            ratios = np.array([0.5, 1.0, 1.19, 1.5, 2.0, 2.5, 2.66, 3.0, 4.0])
            amps = np.array([0.5, 1.0, 0.6, 0.4, 0.5, 0.25, 0.3, 0.15, 0.1])
        keep = ratios * f < 7800
        return ratios[keep], amps[:len(ratios)][keep]

    def note(self, f, seconds, glide_from=None, glide_seconds=0.0):
        """One note of `seconds`, optionally gliding from another pitch."""
        n = max(1, int(seconds * RATE))
        t = np.arange(n) / RATE
        depth, rate = self.vibrato
        pitch = np.full(n, float(f))
        if glide_from is not None and glide_seconds > 0:
            g = np.minimum(1, t / glide_seconds)
            pitch = glide_from * (f / glide_from) ** (g * g * (3 - 2 * g))
        if depth:
            pitch = pitch * (1 + depth * np.sin(2 * np.pi * rate * t + self.rng.uniform(0, 6.3)) * np.minimum(1, t / 0.25))
        phase = 2 * np.pi * np.cumsum(pitch) / RATE
        ratios, amps = self.partials(max(f, glide_from or f))
        struck = self.kind in ("pluck", "piano", "marimba", "bell")
        y = np.zeros(n)
        for r, a in zip(ratios, amps):
            partial = a * np.sin(r * phase + self.rng.uniform(0, 6.3))
            if self.detune:
                partial = 0.5 * (partial + a * np.sin(r * phase * (1 + self.detune)))
            if struck:
                tau = {"pluck": 0.8, "piano": 1.6, "marimba": 0.5, "bell": 3.0}[self.kind] / (1 + 0.5 * (r - 1))
                partial = partial * np.exp(-t / tau)
            y += partial
        if self.kind == "brass":  # brighter as it swells
            y = np.tanh(1.5 * y * np.minimum(1, 0.3 + t / 0.15)) / 1.5
        if self.kind == "flute":
            y += 0.03 * self.rng.standard_normal(n) * np.abs(y).max()
        attack = {"pad": 0.4, "strings": 0.12, "flute": 0.06, "brass": 0.04, "organ": 0.01}.get(self.kind, 0.005)
        release = min(0.08, seconds / 3)
        env = np.minimum(1, t / attack) * np.clip((seconds - t) / max(release, 1e-3), 0, 1)
        if not struck:
            env = env * (1 - 0.3 * (1 - np.exp(-t / 0.3)))  # a little decay to a sustain
        return y * env


def scale_notes(rng, low, high):
    root = int(rng.integers(0, 12))
    steps = (MAJOR, MINOR, PENTATONIC)[int(rng.integers(3))]
    return np.array([m for m in range(low, high + 1) if (m - root) % 12 in steps])


def place(out, y, start):
    s = int(start * RATE)
    if s < len(out):
        out[s:s + len(y)] += y[:len(out) - s]


def render(rng, style, seconds, beat):
    """One part of a piece in `style`."""
    out = np.zeros(int(seconds * RATE))
    low = int(rng.integers(40, 80))  # MIDI 40 (82 Hz) ... 79 (784 Hz), an octave or two above
    notes = scale_notes(rng, low, low + int(rng.integers(12, 27)))
    kind = rng.choice(SUSTAINED_VOICES if style in ("sustained", "chords", "glissando") else VOICES)
    if style in ("ringtone", "jingle"):
        kind = rng.choice(["marimba", "bell", "sine", "square", "pluck", "piano"])
        notes = notes + 12 * int(rng.integers(0, 3))  # up to about 2.5 kHz
    if style == "bells":
        kind = rng.choice(["bell", "marimba", "piano"])
    voice = Voice(rng, kind)
    t = 0.0
    if style == "sustained":
        while t < seconds:
            length = beat * rng.choice([4, 6, 8, 12])
            for m in rng.choice(notes, size=int(rng.integers(1, 3)), replace=False):
                place(out, voice.note(midi_hz(m), min(length, seconds - t) + 0.2), t)
            t += length
    elif style == "chords":
        while t < seconds:
            length = beat * rng.choice([1, 2, 4])
            i = int(rng.integers(0, max(1, len(notes) - 5)))
            for m in notes[i:i + 5:2]:
                place(out, voice.note(midi_hz(m), min(length, seconds - t)), t)
            t += length
    elif style == "arpeggio":
        step = beat / rng.choice([2, 3, 4])
        i = int(rng.integers(0, max(1, len(notes) - 5)))
        chord = list(notes[i:i + 5:2]) + [notes[min(i + 7, len(notes) - 1)]]
        order = chord + chord[-2:0:-1] if rng.random() < 0.5 else chord
        k = 0
        while t < seconds:
            place(out, voice.note(midi_hz(order[k % len(order)]), step * rng.uniform(1, 2.5)), t)
            t += step
            k += 1
            if k % (2 * len(order)) == 0 and rng.random() < 0.5:
                i = int(rng.integers(0, max(1, len(notes) - 5)))
                chord = list(notes[i:i + 5:2]) + [notes[min(i + 7, len(notes) - 1)]]
                order = chord + chord[-2:0:-1] if rng.random() < 0.5 else chord
    elif style == "runs":
        step = beat / rng.choice([2, 4, 6])
        i = int(rng.integers(0, len(notes)))
        while t < seconds:
            i = int(np.clip(i + rng.choice([-2, -1, 1, 1, 2]), 0, len(notes) - 1))
            place(out, voice.note(midi_hz(notes[i]), step * 1.1), t)
            t += step
    elif style == "alternating":  # two notes back and forth, as a trill, an ostinato or a hi-lo figure
        step = rng.choice([beat / 4, beat / 2, beat, 2 * beat]) * rng.uniform(0.8, 1.2)
        i = int(rng.integers(0, len(notes) - 1))
        pair = (notes[i], notes[min(len(notes) - 1, i + int(rng.integers(1, 5)))])
        k = 0
        glide = rng.random() < 0.3
        while t < seconds:
            a, b = pair[k % 2], pair[(k + 1) % 2]
            y = voice.note(midi_hz(a), step, glide_from=midi_hz(b) if glide and k else None, glide_seconds=step * 0.3)
            place(out, y, t)
            t += step
            k += 1
            if k % int(rng.integers(4, 17)) == 0 and rng.random() < 0.3:
                t += beat  # a rest, then on again, perhaps elsewhere
                i = int(rng.integers(0, len(notes) - 1))
                pair = (notes[i], notes[min(len(notes) - 1, i + int(rng.integers(1, 5)))])
    elif style in ("ringtone", "jingle"):
        length = int(rng.integers(4, 10))
        motif = [notes[int(rng.integers(len(notes)))] for _ in range(length)]
        durations = rng.choice([0.5, 0.5, 1, 0.25], size=length) * beat
        pause = rng.uniform(0.3, 1.5) if style == "ringtone" else rng.uniform(1.5, 5)
        while t < seconds:
            for m, d in zip(motif, durations):
                place(out, voice.note(midi_hz(m), d * (1.8 if kind in ("marimba", "bell", "pluck", "piano") else 0.95)), t)
                t += d
            t += pause
            if style == "jingle" and rng.random() < 0.5:
                motif = [notes[int(rng.integers(len(notes)))] for _ in range(length)]
    elif style == "glissando":  # a lead that slides and bends between long notes, or sweeps
        previous = midi_hz(notes[int(rng.integers(len(notes)))])
        while t < seconds:
            length = beat * rng.choice([1, 2, 3, 4])
            target = midi_hz(notes[int(rng.integers(len(notes)))])
            if rng.random() < 0.15:  # a riser or a fall over an octave or more
                target = previous * 2 ** rng.choice([-1.5, -1, 1, 1.5])
            place(out, voice.note(target, min(length, seconds - t) + 0.05, glide_from=previous,
                                  glide_seconds=length * rng.uniform(0.1, 0.8)), t)
            previous = target
            t += length
    elif style == "bells":  # chimes and carillons: struck notes descending or in changes
        step = beat * rng.choice([0.5, 1, 1.5])
        row = list(rng.choice(notes, size=min(len(notes), int(rng.integers(3, 7))), replace=False))
        while t < seconds:
            for m in sorted(row, reverse=True):
                place(out, voice.note(midi_hz(m), 3.0), t)
                t += step
            rng.shuffle(row)
            t += step * rng.choice([0, 1, 2])
    return out


def drums(rng, seconds, beat):
    out = np.zeros(int(seconds * RATE))
    m = int(0.25 * RATE)
    tt = np.arange(m) / RATE
    kick = np.sin(2 * np.pi * (50 + 100 * np.exp(-tt / 0.03)) * tt) * np.exp(-tt / 0.12)
    for k in range(int(seconds / beat * 2) + 1):
        snare = rng.standard_normal(m) * np.exp(-tt / 0.06)
        hat = np.diff(rng.standard_normal(m + 1)) * np.exp(-tt / 0.015)
        place(out, (0.8 * kick if k % 4 == 0 else 0) + (0.4 * snare if k % 4 == 2 else 0) + 0.1 * hat, k * beat / 2)
    return out


def piece(rng, seconds):
    """A seeded piece of tonal music, `seconds` long, at RMS 0.1: one or two styles at once, and
    drums under it a third of the time."""
    beat = 60 / rng.uniform(50, 200)
    styles = rng.choice(STYLES, size=1 if rng.random() < 0.5 else 2, replace=False)
    out = np.zeros(int(seconds * RATE))
    for i, style in enumerate(styles):
        part = render(rng, style, seconds, beat)
        out += part / (np.sqrt(np.mean(part ** 2)) + 1e-12) * (1.0 if i == 0 else 10 ** (rng.uniform(-12, 0) / 20))
    if rng.random() < 0.33:
        d = drums(rng, seconds, beat)
        out += d / (np.sqrt(np.mean(d ** 2)) + 1e-12) * 10 ** (rng.uniform(-15, -3) / 20)
    return out / (np.sqrt(np.mean(out ** 2)) + 1e-12) * 0.1


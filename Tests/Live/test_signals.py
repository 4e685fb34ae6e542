"""Seeded test signals the live tests share: speech-like voiced syllables and their level."""
import numpy as np


def active_level(x, rate=16_000):
    """Active speech level (P.56 style, 10 ms frames), dBFS."""
    hop = rate // 100
    frames = (x[: len(x) // hop * hop].reshape(-1, hop) ** 2).mean(axis=1)
    level = frames.mean() + 1e-20
    for _ in range(20):
        above = frames[frames > level * 10 ** (-1.59)]
        if not len(above):
            break
        level = above.mean()
    return 10 * np.log10(level)


def syllables(rng, seconds, rate=16_000, pitch=(110, 200), level_dbfs=None, random_phases=False):
    """Voiced syllables (0.12-0.3 s, harmonics falling above 500 Hz, sine envelopes) with short
    gaps; scaled to `level_dbfs` active level when given. With `random_phases` each harmonic
    starts at its own phase, as in speech, instead of all at zero (a train of sharp pulses)."""
    total = int(seconds * rate)
    x = np.zeros(total)
    n = 0
    while n < total - rate // 4:
        length = int(rng.uniform(0.12, 0.3) * rate)
        t = np.arange(length) / rate
        f0 = rng.uniform(*pitch)
        voice = sum(np.sin(2 * np.pi * f0 * h * t + (rng.uniform(0, 6) if random_phases else 0)) * min(1, (500 / (f0 * h)) ** 1.5)
                    for h in range(1, 30) if f0 * h < rate / 2)
        x[n:n + length] = np.sin(np.pi * t / t[-1]) * voice
        n += length + int(rng.uniform(0.05, 0.2) * rate)
    if level_dbfs is not None:
        x *= 10 ** ((level_dbfs - active_level(x, rate)) / 20)
    return x

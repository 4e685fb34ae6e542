"""The features of the sound check's pause detector (Sources/EarshotCapture/PauseDetector.swift),
the reference the Swift code is checked against (Tests/EarshotCaptureTests/Fixtures/pauses.json).

One vector of 45 values per 10 ms frame of a 16 kHz recording (512-point periodic-Hann frames,
scaled so that a frame's bins sum to the mean square under it):
  0–19   each of 20 bands (100 Hz–8 kHz, log-spaced) over its own low floor (the 10th percentile
         of its 50 ms power over the audible frames), dB / 10, within −1…6
  20–39  the same, averaged over ±50 ms
  40     the frame's power over the recording's active speech level (P.56 style, above the
         broadband floor), dB / 10, within −6…2
  41–43  that, averaged over ±50 ms and ±250 ms, and its largest value within ±250 ms
  44     the active level over the broadband floor, dB / 10, within 0…8
  45–64  each band's share of the frame (dB) less the talker's: its mean share over the frames
         within 10 dB of the active level, averaged over ±50 ms, dB / 10, within −3…3
  65     the root mean square of those 20
  66–67  periodicity (the autocorrelation's largest value at lags of 2.5–16 ms, 400–62.5 Hz,
         over its value at lag 0), and that averaged over ±50 ms
  68–69  how far the frame's pitch lies from the talker's (the median over the loud periodic
         frames), in octaves up to 2, times the periodicity; and that averaged over ±50 ms
Another voice, a bark or a motor between the words differs from the talker in timbre or pitch,
where its level alone may not.
"""
import numpy as np
from scipy.ndimage import maximum_filter1d

RATE = 16_000
FRAME = 512
HOP = 160
BANDS = 20
FEATURES = 2 * BANDS + 5 + BANDS + 5
TINY = 1e-14


def band_edges():
    """Each band's first bin and the bin after its last."""
    edges = np.clip(np.round(np.geomspace(100, 8000, BANDS + 1) / (RATE / FRAME)).astype(int), 1, FRAME // 2)
    return np.array([[edges[j], max(edges[j] + 1, edges[j + 1])] for j in range(BANDS)])


def spectrogram(x):
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(FRAME) / FRAME)
    if len(x) < FRAME:
        x = np.pad(x, (0, FRAME - len(x)))
    frames = np.lib.stride_tricks.sliding_window_view(x, FRAME)[::HOP]
    p = np.abs(np.fft.rfft(frames * w, axis=1)) ** 2 / (FRAME * np.sum(w ** 2))
    p[:, 1:-1] *= 2
    return p


def active_level(excess, margin_db=15.9):
    """P.56's idea on frame powers: the mean over frames within `margin_db` of that mean."""
    level = excess.mean()
    for _ in range(20):
        active = (excess > level * 10 ** (-margin_db / 10)) & (excess > 0)
        if not active.any():
            return 0.0
        following = excess[active].mean()
        if abs(following - level) <= 1e-6 * level:
            return following
        level = following
    return level


def moving_mean(a, half):
    padded = np.pad(a, [(half, half)] + [(0, 0)] * (a.ndim - 1), mode="edge")
    c = np.concatenate([np.zeros((1,) + a.shape[1:]), np.cumsum(padded, 0)], 0)
    return (c[2 * half + 1:] - c[: -2 * half - 1]) / (2 * half + 1)


def features(x):
    """(features per frame, each frame's power, whether it is audible) of 16 kHz mono `x`."""
    p = spectrogram(np.asarray(x, dtype=np.float64))
    edges = band_edges()
    bands = np.stack([p[:, a:b].sum(1) for a, b in edges], 1)
    total = p.sum(1)
    audible = total > 1e-12
    keep = audible if audible.any() else np.ones_like(audible)
    floor = np.quantile(moving_mean(bands, 2)[keep], 0.1, axis=0) + TINY
    broadband = np.quantile(moving_mean(total, 2)[keep], 0.1) + TINY
    level = active_level(np.maximum(0, total - broadband)) + TINY
    over = np.clip(10 * np.log10((bands + TINY) / floor), -10, 60) / 10
    rel = np.clip(10 * np.log10((total + TINY) / level), -60, 20) / 10
    f = np.concatenate([over, moving_mean(over, 5), rel[:, None], moving_mean(rel, 5)[:, None],
                        moving_mean(rel, 25)[:, None], maximum_filter1d(rel, 51, mode="nearest")[:, None],
                        np.full((len(rel), 1), np.clip(10 * np.log10(level / broadband), 0, 80) / 10)], 1)
    return np.concatenate([f, talker_relative(p, bands, total, level)], 1).astype(np.float32), total, audible


def talker_relative(p, bands, total, level):
    """Features 45–69: timbre and pitch against the talker's, who is what is loud."""
    loud = total > level * 0.1
    if loud.sum() < 10:
        loud = total >= np.quantile(total, 0.8)
    shape = 10 * np.log10((bands + TINY) / (total[:, None] + TINY))
    timbre = moving_mean(np.clip(shape - shape[loud].mean(0), -30, 30) / 10, 5)
    distance = np.sqrt((timbre ** 2).mean(1))
    # The autocorrelation of the windowed frame, from its power spectrum.
    r = np.fft.irfft(p, axis=1)
    low, high = RATE // 400, RATE * 2 // 125
    lags = r[:, low:high] / (r[:, :1] + TINY)
    periodicity = lags.max(1)
    octaves = np.log2(RATE / (lags.argmax(1) + low))
    voiced = (periodicity > 0.4) & loud
    pitch = np.median(octaves[voiced]) if voiced.sum() > 5 else np.median(octaves)
    off = np.clip(np.abs(octaves - pitch), 0, 2) * np.clip(periodicity, 0, 1)
    return np.concatenate([timbre, distance[:, None], periodicity[:, None], moving_mean(periodicity, 5)[:, None],
                           off[:, None], moving_mean(off, 5)[:, None]], 1)

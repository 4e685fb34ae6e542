"""Alert-detector features: the reference definition the Swift code reproduces.

Frames of 1024 samples (64 ms) at 16 kHz every 320 samples (20 ms), periodic Hann window,
as a stream sees them: the input is preceded by silence and frame t holds the 1024 samples
that end at sample (t + 1) * hop, so a signal of n samples has n // hop frames.
Per frame and per mel band (64 Slaney bands, 50 Hz - 8 kHz, as librosa builds them):
  * log-mel:   log10(mel energy + 1e-10)
  * tonality:  log10((peak bin power + 1e-10) / (weighted mean bin power + 1e-10)) over the
               bins the band covers: a whistle, a siren or a piezo tone stands far above the
               band's mean; noise and speech do not.
A network input is the last WINDOW frames: log-mel, each band less its mean over the window
(so neither the level nor the colour of the input matters), and tonality as is
(`network_input`, which training and the references share). A stream decides from its first
STRIDE frames on: frames before it began are silence (`as_stream`), log-mel log10(FLOOR) and
tonality 0, what an all-zero frame gives.
"""
import numpy as np
import librosa
import scipy.signal

SAMPLE_RATE = 16_000
FRAME = 1024
HOP = 320
MELS = 64
FMIN = 50.0
FMAX = 8_000.0
WINDOW = 50        # frames of context: 1 s
STRIDE = 5         # frames between decisions: 100 ms
FLOOR = 1e-10
CLASSES = ["background", "siren", "smoke_alarm", "car_horn", "doorbell"]


def filterbank():
    return librosa.filters.mel(sr=SAMPLE_RATE, n_fft=FRAME, n_mels=MELS, fmin=FMIN, fmax=FMAX,
                               htk=False, norm="slaney").astype(np.float64)


def frame_features(x):
    """(frames, 2, MELS) float32: log-mel and tonality of every complete frame of x."""
    x = padded(x)
    count = 0 if len(x) < FRAME else 1 + (len(x) - FRAME) // HOP
    if count == 0:
        return np.zeros((0, 2, MELS), np.float32)
    window = scipy.signal.get_window("hann", FRAME, fftbins=True)
    weights = filterbank()
    support = weights > 0
    out = np.empty((count, 2, MELS), np.float64)
    for start in range(0, count, 4096):
        idx = np.arange(start, min(count, start + 4096))
        frames = np.lib.stride_tricks.sliding_window_view(x, FRAME)[idx * HOP] * window
        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
        mel = power @ weights.T
        out[idx, 0] = np.log10(mel + FLOOR)
        mean = mel / weights.sum(axis=1)
        peak = np.stack([power[:, s].max(axis=1) if s.any() else np.zeros(len(idx)) for s in support], axis=1)
        out[idx, 1] = np.log10((peak + FLOOR) / (mean + FLOOR))
    return out.astype(np.float32)


def padded(x):
    """x as the frames see it: preceded by FRAME - HOP zeros."""
    return np.concatenate([np.zeros(FRAME - HOP), np.asarray(x, dtype=np.float64)])


def network_input(w):
    """Windows of frames (..., WINDOW, 2, MELS) as the network takes them, (..., 2, WINDOW,
    MELS) float32: log-mel with each band less its mean over the window, tonality as is. The
    one definition for training (train.py), references and Earshot's parity."""
    w = np.asarray(w, dtype=np.float32)
    logmel = w[..., 0, :] - w[..., 0, :].mean(axis=-2, keepdims=True)
    return np.ascontiguousarray(np.stack([logmel, w[..., 1, :]], axis=-3))


def as_stream(frames):
    """Frames (..., count, 2, MELS) preceded by WINDOW - 1 frames of silence, so that a window
    may end at any of them: frame i of the input is frame i + WINDOW - 1 of the result."""
    frames = np.asarray(frames)
    silence = np.zeros(frames.shape[:-3] + (WINDOW - 1, 2, MELS), frames.dtype)
    silence[..., 0, :] = np.log10(FLOOR)
    return np.concatenate([silence, frames], axis=-3)


def window_input(frames, end):
    """The network input for the window ending at frame `end` (inclusive), however early:
    (2, WINDOW, MELS)."""
    return network_input(as_stream(frames[max(0, end - WINDOW + 1):end + 1])[-WINDOW:])

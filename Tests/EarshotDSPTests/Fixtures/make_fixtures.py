"""Reference values for EarshotDSP tests, computed with librosa, SciPy and NumPy.

Run with `make fixtures` (it creates the Python environment); the JSON files beside this
script are committed so the Swift tests need no Python.
"""
import json
import pathlib

import librosa
import numpy as np
from scipy.signal import get_window

HERE = pathlib.Path(__file__).parent


def mel_fixtures():
    cases = [
        dict(sr=16000, n_fft=512, n_mels=40, fmin=0.0, fmax=None, htk=False, norm="slaney"),
        dict(sr=22050, n_fft=1024, n_mels=128, fmin=0.0, fmax=None, htk=False, norm="slaney"),
        dict(sr=16000, n_fft=400, n_mels=64, fmin=50.0, fmax=7600.0, htk=True, norm=None),
        dict(sr=48000, n_fft=1024, n_mels=64, fmin=20.0, fmax=20000.0, htk=True, norm="slaney"),
        dict(sr=44100, n_fft=2048, n_mels=48, fmin=30.0, fmax=16000.0, htk=False, norm=None),
    ]
    out = []
    for case in cases:
        weights = librosa.filters.mel(**case)
        out.append({**case, "weights": weights.astype(np.float64).ravel().tolist()})
    return out


def window_fixtures():
    specs = [("hann", "hann"), ("hamming", "hamming"), ("blackman", "blackman"), ("kaiser8.6", ("kaiser", 8.6))]
    out = []
    for name, spec in specs:
        for n in (1, 33, 64):
            for periodic in (True, False):
                w = get_window(spec, n, fftbins=periodic)
                out.append({"window": name, "count": n, "periodic": periodic, "values": w.tolist()})
    return out


def fft_fixtures():
    rng = np.random.default_rng(20261121)
    out = []
    for n in (1, 2, 7, 64, 100, 480, 1024, 1331):
        x = rng.standard_normal(n).astype(np.float32)
        spectrum = np.fft.rfft(x.astype(np.float64))
        out.append({"size": n, "signal": x.tolist(), "real": spectrum.real.tolist(), "imag": spectrum.imag.tolist()})
    return out


def main():
    (HERE / "mel.json").write_text(json.dumps(mel_fixtures()))
    (HERE / "windows.json").write_text(json.dumps(window_fixtures()))
    (HERE / "fft.json").write_text(json.dumps(fft_fixtures()))
    print("wrote", ", ".join(p.name for p in sorted(HERE.glob("*.json"))))


if __name__ == "__main__":
    main()

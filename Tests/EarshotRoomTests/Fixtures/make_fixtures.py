"""Reference room responses from pyroomacoustics and iterated convolutions from SciPy.

Run with `make fixtures`. pyroomacoustics is configured for a raw image-source response
(no high-pass, no air absorption, frequency-flat walls) so it can be compared directly;
its amplitudes omit the 1/(4π) that Earshot includes.
"""
import json
import pathlib

import numpy as np
import pyroomacoustics as pra
from scipy.signal import fftconvolve

HERE = pathlib.Path(__file__).parent


def room_fixtures():
    pra.constants.set("rir_hpf_enable", False)
    cases = [
        dict(size=[5.0, 4.0, 3.0], absorption=0.3, max_order=6, fs=16000, source=[1.0, 1.5, 1.2], mic=[3.5, 2.6, 1.6]),
        dict(size=[7.0, 5.0, 3.2], absorption=0.15, max_order=10, fs=8000, source=[2.0, 3.1, 1.7], mic=[5.2, 1.4, 1.1]),
    ]
    out = []
    for case in cases:
        room = pra.ShoeBox(
            case["size"], fs=case["fs"], materials=pra.Material(case["absorption"]),
            max_order=case["max_order"], air_absorption=False, use_rand_ism=False,
        )
        room.add_source(case["source"])
        room.add_microphone(case["mic"])
        room.compute_rir()
        out.append({**case, "rir": np.asarray(room.rir[0][0], dtype=np.float64).tolist()})
    return out


def iteration_fixture():
    rng = np.random.default_rng(6)
    x = rng.standard_normal(400).astype(np.float32)
    h = (rng.standard_normal(50) * np.exp(-np.arange(50) / 10)).astype(np.float32)
    h[0] = 1.0
    y = x.astype(np.float64)
    generations = []
    for _ in range(5):
        y = fftconvolve(y, h.astype(np.float64))
        generations.append(y.tolist())
    return {"source": x.tolist(), "response": h.tolist(), "generations": generations}


def main():
    (HERE / "rooms.json").write_text(json.dumps(room_fixtures()))
    (HERE / "iteration.json").write_text(json.dumps(iteration_fixture()))
    print("wrote rooms.json, iteration.json")


if __name__ == "__main__":
    main()

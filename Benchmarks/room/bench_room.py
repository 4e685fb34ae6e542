"""`make bench-room`: iterated room convolution, Earshot against SciPy and NumPy in one run.

The inputs are the ones the goal names: a 60 s stereo recording at 48 kHz and a 2 s stereo
response, 32 generations, no normalisation. Each method is timed end to end on the same
machine in the same run; Earshot's time includes reading and writing its files, the Python
methods' do not.
"""
import argparse
import pathlib
import subprocess
import tempfile
import time

import numpy as np
import soundfile as sf
from scipy.signal import fftconvolve

RATE = 48_000


def inputs(seed=7):
    rng = np.random.default_rng(seed)
    source = (0.1 * rng.standard_normal((60 * RATE, 2))).astype(np.float32)
    t = np.arange(2 * RATE) / RATE
    response = (rng.standard_normal((2 * RATE, 2)) * np.exp(-t / 0.3)[:, None]).astype(np.float32)
    response[0] = 1.0
    # Unit energy keeps 32 generations inside the float range for every method.
    response /= np.sqrt((response ** 2).sum(axis=0, keepdims=True))
    return source, response


def scipy_loop(source, response, generations):
    out = []
    for c in range(source.shape[1]):
        y = source[:, c].astype(np.float64)
        for _ in range(generations):
            y = fftconvolve(y, response[:, c].astype(np.float64))
        out.append(y)
    return np.stack(out, axis=1)


def numpy_one_fft(source, response, generations):
    length = source.shape[0] + generations * (response.shape[0] - 1)
    n = 1 << (length - 1).bit_length()
    out = []
    for c in range(source.shape[1]):
        spectrum = np.fft.rfft(source[:, c], n) * np.fft.rfft(response[:, c], n) ** generations
        out.append(np.fft.irfft(spectrum, n)[:length])
    return np.stack(out, axis=1)


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--generations", type=int, default=32)
    args = parser.parse_args()
    source, response = inputs()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        sf.write(tmp / "source.wav", source, RATE, subtype="FLOAT")
        sf.write(tmp / "ir.wav", response, RATE, subtype="FLOAT")
        command = [args.earshot, "room", "iterate", str(tmp / "source.wav"), "--ir", str(tmp / "ir.wav"),
                   "--generations", str(args.generations), "--normalize", "none", "-o", str(tmp / "out.wav")]
        earshot_times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(command, check=True)
            earshot_times.append(time.perf_counter() - start)
        earshot = min(earshot_times)
        mine, _ = sf.read(tmp / "out.wav", dtype="float64")
        scipy_time, reference = timed(scipy_loop, source, response, args.generations)
        numpy_time, one_fft = timed(numpy_one_fft, source, response, args.generations)

    def rel(a):
        return np.linalg.norm(a - reference) / np.linalg.norm(reference)

    print(f"Iterated convolution: 60 s stereo at 48 kHz, 2 s stereo response, {args.generations} generations\n")
    print(f"{'method':42} {'seconds':>8} {'speed-up vs SciPy':>18} {'relative error':>15}")
    print(f"{'SciPy fftconvolve loop (float64)':42} {scipy_time:8.2f} {1.0:17.1f}x {0.0:15.1e}")
    print(f"{'NumPy one FFT, spectrum to the power k':42} {numpy_time:8.2f} {scipy_time / numpy_time:17.1f}x {rel(one_fft):15.1e}")
    print(f"{'earshot room iterate (incl. file I/O)':42} {earshot:8.2f} {scipy_time / earshot:17.1f}x {rel(mine):15.1e}")


if __name__ == "__main__":
    main()

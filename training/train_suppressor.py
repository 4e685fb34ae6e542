"""`make train-enhance`: the learned low-delay noise suppressor.

A recurrent per-bin gain network on Earshot's low-delay STFT (512-sample asymmetric analysis
frames, 64-sample hop at 16 kHz: 32 ms of frequency resolution, 7.9 ms of delay):

    log power of 257 bins → dense 256 (tanh) → GRU 256 → GRU 256 → dense 257 (sigmoid) → gains

about 922 k weights (`--hidden` sets the width), causal (each frame's gains from that frame and
the past only). The gains go through the same impulse-response taper as at run time (±8 ms
unless `--gain-taps` says otherwise; a fixed linear map here), so the network learns the filter that is actually applied;
the weights' metadata carries the length, and the Swift side applies the one they name.

Data, mixed afresh for every batch (seeded) from the training side of ../shared/data. The
development side differs in kind, not only in seed: it holds noise *kinds* training never hears.
- training (`Mixer("train")`): read speech of the LibriSpeech training speakers with pauses,
  tempo and pitch shifts; noise from UrbanSound8K's air conditioners, children playing,
  drilling, idling engines and jackhammers (every recording of those kinds), babble of 3–8
  training speakers, household events (ProtoSound knocks, appliances and cries, Donate-a-Cry),
  music (music-like pieces and `tonal_music.py`'s training seeds), hum, and coloured noise with
  random spectral shapes and slow swells; one to three at a time;
- development (`Mixer("dev")`): the development speakers in the Speech Commands noise
  recordings (never trained on), UrbanSound8K's dogs, gun shots and street music, and babble of
  development speakers (`eval/enhance/build_realset.py` builds the scored set of the same kinds).
−5…20 dB SNR; measured (IoSR, alternate azimuths) and simulated rooms for speech and noise
separately; microphone colouration and levels from −45 to −10 dBFS applied alike to mixture and
target. The target is the speech with its first 50 ms of room response (direct sound and early
reflections): late reverberation counts as noise. A twentieth of the clips are noise alone, a
twentieth speech alone. With `--alert-share`, that share of the clips also carries an alert that
belongs to the target (the split's real ProtoSound alerts, UrbanSound8K's training sirens and
horns, and with `--alerts` synthetic ones), so that noise reduction leaves alerts the detector
has not yet found; at 0.2 it made the development loss worse for every noise kind, so the default
is none and alerts rely on the separator. `--no-urbansound` leaves UrbanSound8K (CC BY-NC 3.0)
out; weights trained with it carry that licence in their metadata (`licence`).

Loss: the compressed spectral error (|·|^0.3) of the gained noisy spectrum against the target's,
0.7 on magnitudes and 0.3 on complex values (`--complex-share`), per clip normalised by its
mixture level. The development loss is always measured with 0.7 and 0.3, whatever a run trains
with, so that runs compare.

Schedule: a fixed number of steps (`--steps`) with a cosine learning rate, checkpointed every 100
steps; `--minutes` stops a run early and `--resume` goes on from the checkpoint, so training
accumulates over runs. The weights judged on the development side, kept and exported are an
exponential average of the trained ones.

Writes the best weights so far (input normalisation folded into the first layer; the shape and
STFT in the metadata) and their Swift parity fixture to training/data/, or where `--weights` and
`--fixture` say (Sources/EarshotEnhance/Resources/Suppressor.safetensors and
Tests/EarshotEnhanceTests/Fixtures/suppressor_parity.json ship them).
"""
import argparse
import json
import math
import os
import pathlib
import time

import numpy as np
import scipy.signal
import soundfile as sf
import torch
import torch.nn as nn

from training import realaudio as ra
from training import tonal_music

RATE = 16_000
FRAME, HOP = 512, 64
BINS = FRAME // 2 + 1
GAIN_TAPS = 128  # half-length of the gain's impulse response (±8 ms; `--gain-taps`)
HIDDEN = 256
EARLY = int(0.05 * RATE)


def analysis_window():
    """`STFTConfiguration.lowDelay(frameSize: 512, hop: 64)`'s analysis window."""
    rise, fall = FRAME - HOP, HOP
    n = np.arange(FRAME)
    return np.where(n < rise, np.sin(np.pi * n / (2 * rise)), np.cos(np.pi * (n - rise) / (2 * fall))).astype(np.float32)


def taper_matrix(taps):
    """The linear map from per-bin gains to the gains of the tapered filter actually applied."""
    distance = np.minimum(np.arange(FRAME), FRAME - np.arange(FRAME))
    taper = np.where(distance >= taps, 0, 0.5 + 0.5 * np.cos(np.pi * distance / taps))
    return np.fft.rfft(taper * np.fft.irfft(np.eye(BINS), n=FRAME, axis=1), axis=1).real.astype(np.float32)


WINDOW = analysis_window()
WINDOW_ENERGY = float(np.sum(WINDOW ** 2))


def spectra(x):
    """Frames exactly as Earshot's streaming STFT cuts them: the first ends at sample HOP − 1,
    preceded by silence. x: (batch, samples) → complex (batch, frames, bins)."""
    padded = torch.nn.functional.pad(x, (FRAME - HOP, 0))
    window = torch.from_numpy(WINDOW).to(x.device)
    s = torch.stft(padded, FRAME, HOP, FRAME, window=window, center=False, return_complex=True)
    return s.transpose(1, 2)


def synthesis_tail():
    """The last 2·HOP samples of `STFTConfiguration.lowDelay`'s synthesis window (a Hann window
    over the analysis window; zero before them): with the analysis window they overlap-add to one."""
    n = np.arange(FRAME - 2 * HOP, FRAME)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * (n - (FRAME - 2 * HOP)) / (2 * HOP))
    return (hann / WINDOW[n]).astype(np.float32)


SYNTHESIS_TAIL = synthesis_tail()


def waveform(spectrum):
    """Earshot's low-delay overlap-add of (batch, frames, bins) spectra: each frame's last 2·HOP
    samples through the synthesis window, the first half added to the previous frame's second."""
    tail = torch.fft.irfft(spectrum, n=FRAME, dim=-1)[..., FRAME - 2 * HOP:]
    tail = tail * torch.from_numpy(SYNTHESIS_TAIL).to(spectrum.device)
    out = tail[..., :HOP].clone()
    out[:, 1:] += tail[:, :-1, HOP:]
    return out.reshape(spectrum.shape[0], -1)


def si_sdr(estimate, reference):
    """Scale-invariant signal-to-distortion ratio per clip, dB."""
    reference = reference - reference.mean(dim=1, keepdim=True)
    estimate = estimate - estimate.mean(dim=1, keepdim=True)
    scale = (estimate * reference).sum(1, keepdim=True) / (reference.pow(2).sum(1, keepdim=True) + 1e-12)
    target = scale * reference
    return 10 * torch.log10(target.pow(2).sum(1) / ((estimate - target).pow(2).sum(1) + 1e-12) + 1e-12)


def features(power):
    """Log power per bin, as the Swift side computes it (power normalised by the window's energy)."""
    return torch.log10(power / WINDOW_ENERGY + 1e-10)


class Suppressor(nn.Module):
    def __init__(self, hidden=HIDDEN):
        super().__init__()
        self.hidden = hidden
        self.register_buffer("mean", torch.zeros(BINS))
        self.register_buffer("std", torch.ones(BINS))
        self.input = nn.Linear(BINS, hidden)
        self.gru1 = nn.GRU(hidden, hidden, batch_first=True)
        self.gru2 = nn.GRU(hidden, hidden, batch_first=True)
        self.output = nn.Linear(hidden, BINS)

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


def looped(rng, x, n):
    """n samples of a recording from a random point, repeated (with a 10 ms cross-fade) when it
    is shorter: UrbanSound8K slices last at most 4 s."""
    if len(x) >= n:
        return ra.segment(rng, x, n)
    tiled = np.tile(ra.faded(x), n // len(x) + 2)
    start = int(rng.integers(len(x)))
    return tiled[start:start + n].copy()


def hum(rng, n):
    t = np.arange(n) / RATE
    f0 = rng.choice([50.0, 60.0, rng.uniform(80, 400)])
    return sum(rng.uniform(0.1, 1) / k * np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 6.3)) for k in range(1, 12)
               if f0 * k < RATE / 2)


class Mixer:
    """Noisy/target clips of one side. The training side mixes only the training noise kinds;
    the development side only kinds training never hears (the Speech Commands noise recordings,
    UrbanSound8K's dogs, gun shots and street music, babble of the development speakers), in the
    development rooms, so the development loss measures a new noise, not a remembered one."""

    def __init__(self, data, split, music_pieces, alerts=None, urban=True, alert_share=0.0):
        packed = split == "train" and os.path.exists(os.path.join(data, PACK))
        if packed and (alert_share > 0 or not urban):
            raise SystemExit(f"{data}: a pack holds no alerts, and its urban recordings are chosen when it is written")
        self.bank = Pack(data) if packed else ra.Bank(data, split)
        if not self.bank:
            raise SystemExit(f"{data}: shared recordings not found (expected speech/librispeech and noise)")
        # Alerts belong to the target: noise reduction must never remove one, even before the
        # detector has opened the separator. The real ones of this side (ProtoSound, and the
        # UrbanSound8K sirens and horns of its recordings), and synthetic ones when given.
        self.alerts, self.alert_share = [], alert_share
        if split == "train" and alert_share > 0:
            self.alerts = [x for c in ra.ALERTS for x in self.bank.alerts[c]]
            if urban:
                street = ra.UrbanBank(data, "train")
                self.alerts += [x for _, x in street.sirens + street.horns]
            if alerts:
                for c in ra.ALERTS:
                    self.alerts += [ra.trim(ra.load(str(f))) for f in sorted(pathlib.Path(alerts).glob(f"{c}_*.wav"))[:100]]
        rng = np.random.default_rng(7 if split == "train" else 8)
        if split == "train":
            if packed:
                self.recordings = self.bank.recordings
            else:
                self.recordings = [x for kind in ra.SUPPRESSOR_TRAIN_URBAN for x in ra.urban_kind(data, kind)] if urban else []
            self.music = [ra.music(rng, 8) for _ in range(music_pieces // 2)]
            self.music += [tonal_music.piece(np.random.default_rng(tonal_music.TRAIN_SEEDS + 500 + i), 8)
                           for i in range(music_pieces - music_pieces // 2)]
            kinds = {"recording": 0.25, "babble": 0.17, "events": 0.12, "music": 0.1, "coloured": 0.3, "hum": 0.06}
            if not self.recordings:
                del kinds["recording"]
        else:
            self.recordings = [ra.load(str(p)) for p in sorted(pathlib.Path(data, "noise").glob("*.wav"))]
            self.recordings += [x for kind in ("dog_bark", "gun_shot") for x in ra.urban_kind(data, kind)]
            self.music = ra.urban_kind(data, "street_music")
            kinds = {"recording": 0.5, "babble": 0.25, "music": 0.25}
            if not self.music:  # UrbanSound8K absent
                del kinds["music"]
        total = sum(kinds.values())
        self.kinds, self.weights = list(kinds), [w / total for w in kinds.values()]

    def noise(self, rng, n):
        b = self.bank
        kind = rng.choice(self.kinds, p=self.weights)
        if kind == "recording":
            x = looped(rng, self.recordings[int(rng.integers(len(self.recordings)))], n)
        elif kind == "babble":
            x = ra.speech_track(rng, b, n, talkers=int(rng.integers(3, 9)))
        elif kind == "events":
            x = ra.events_track(rng, b, n) + 0.05 * coloured_noise(rng, n)
        elif kind == "music":
            x = looped(rng, self.music[int(rng.integers(len(self.music)))], n)
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
        if self.alerts and rng.random() < self.alert_share:
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


class Batches(torch.utils.data.IterableDataset):
    """Training batches made by worker processes, each from its own seeded stream, so that a
    GPU is not kept waiting on one process's mixing."""

    def __init__(self, mixer, size, seconds, seed):
        super().__init__()
        self.mixer, self.size, self.seconds, self.seed = mixer, size, seconds, seed

    def __iter__(self):
        worker = torch.utils.data.get_worker_info()
        rng = np.random.default_rng([self.seed, worker.id if worker else 0])
        while True:
            yield self.mixer.batch(rng, self.size, self.seconds)


# --- a pack of the training side, for a machine without ../shared/data ---------------------

PACK = "suppressor-pack.json"


def write_pack(data, folder):
    """The recordings `Mixer(data, "train")` reads, written to `folder` so that training can run
    where only that folder travels: speech, UrbanSound8K's training kinds and household events
    as Ogg Vorbis (one file per kind; each recording scaled to a 0.9 peak, which the mixer's
    level normalisation undoes), measured rooms as float32. Music, babble, hum and coloured noise
    are made where it runs. Speech is coded at about 68 kbit/s, noise at about 56; target and
    mixture carry the same coding."""
    mixer = Mixer(data, "train", 0)
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PACK).unlink(missing_ok=True)  # written last: a pack stopped half-way is no pack
    kinds = {"speech": mixer.bank.speech, "recordings": mixer.recordings, "events": mixer.bank.events}
    index = {"rate": RATE, "licence": URBAN_LICENCE if mixer.recordings else None}
    for kind, recordings in kinds.items():
        with sf.SoundFile(str(folder / f"{kind}.ogg"), "w", RATE, 1, format="OGG", subtype="VORBIS",
                          compression_level=0.1 if kind == "speech" else 0.3) as f:
            for x in recordings:
                scaled = 0.9 * x / (np.abs(x).max() + 1e-12)
                for start in range(0, len(scaled), RATE):  # one second at a time: long writes crash libvorbis
                    f.write(scaled[start:start + RATE])
        index[kind] = [len(x) for x in recordings]
    np.savez(folder / "rooms.npz", *[r.astype(np.float32) for r in mixer.bank.rooms])
    (folder / PACK).write_text(json.dumps(index))
    print(f"wrote {folder}: " + ", ".join(f"{k} {sum(index[k]) / RATE / 60:.1f} min" for k in kinds))


class Pack:
    """A pack `write_pack` wrote, read as the training side's `Bank`."""

    def __init__(self, folder):
        folder = pathlib.Path(folder)
        index = json.loads((folder / PACK).read_text())
        for kind in ("speech", "recordings", "events"):
            x, rate = sf.read(str(folder / f"{kind}.ogg"), dtype="float64")
            if rate != RATE or len(x) < sum(index[kind]):
                raise SystemExit(f"{folder / kind}.ogg: not the pack its index describes")
            ends = np.cumsum(index[kind])
            setattr(self, kind, [x[e - n:e] for e, n in zip(ends, index[kind])])
        with np.load(folder / "rooms.npz") as rooms:
            self.rooms = [rooms[k].astype(np.float64) for k in sorted(rooms.files, key=lambda k: int(k.split("_")[1]))]
        self.licence = index["licence"]

    def __bool__(self):
        return bool(self.speech) and bool(self.recordings)


# --- training -----------------------------------------------------------------------------

def loss_fn(model, taper, noisy, target, complex_share=0.3, sisdr_weight=0.0):
    """The compressed spectral error (|·|^0.3) of the gained noisy spectrum against the target's,
    0.7 on magnitudes and 0.3 on the complex values: the complex part counts the noisy phase a
    gain lets through, so a bin the noise dominates costs more than its magnitude error says.
    With `sisdr_weight`, less that much of the SI-SDR (dB) of the output waveform, synthesised as
    Earshot synthesises it, against the target's, over the clips that hold speech."""
    y, s = spectra(noisy), spectra(target)
    power = y.real ** 2 + y.imag ** 2
    gains = (model(features(power)) @ taper).clamp(0, 1)
    scale = noisy.pow(2).mean(dim=1).add(1e-12).sqrt().view(-1, 1, 1) * math.sqrt(WINDOW_ENERGY)
    magnitude_y, magnitude_s = y.abs() / scale + 1e-9, s.abs() / scale + 1e-9
    estimate, reference = (gains * magnitude_y) ** 0.3, magnitude_s ** 0.3
    phase_y, phase_s = y / (y.abs() + 1e-12), s / (s.abs() + 1e-12)
    complex_error = (estimate * phase_y - reference * phase_s).abs().pow(2)
    loss = (1 - complex_share) * (estimate - reference).pow(2).mean() + complex_share * complex_error.mean()
    if sisdr_weight:
        speech = target.pow(2).mean(dim=1) > 1e-10
        if speech.any():
            loss = loss - sisdr_weight * si_sdr(waveform(gains * y)[speech], waveform(s)[speech]).mean()
    return loss


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


def load_weights(path):
    """A model from exported weights (their input normalisation stays folded into the first layer)."""
    from safetensors.torch import load_file
    tensors = load_file(path)
    model = Suppressor(tensors["input.weight"].shape[0])
    with torch.no_grad():
        for name in ("input", "output"):
            getattr(model, name).weight.copy_(tensors[f"{name}.weight"])
            getattr(model, name).bias.copy_(tensors[f"{name}.bias"])
        for name in ("gru1", "gru2"):
            g = getattr(model, name)
            for part in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(g, f"{part}_l0").copy_(tensors[f"{name}.{part}"])
    return model


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
    parser.add_argument("--steps", type=int, default=12000,
                        help="total optimiser steps (the learning-rate schedule's length); 0: the schedule lasts --minutes")
    parser.add_argument("--minutes", type=float, default=float("inf"), help="stop this run after this long (resume later)")
    parser.add_argument("--batch", type=int, default=24)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--lr", type=float, default=1.5e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--checkpoint", default="training/data/suppressor.pt")
    parser.add_argument("--resume", action="store_true", help="go on from the checkpoint's step")
    parser.add_argument("--complex-share", type=float, default=0.3, help="the loss's share on compressed complex values")
    parser.add_argument("--sisdr-weight", type=float, default=0.0,
                        help="subtract this much of the output waveform's SI-SDR (dB) from the training loss")
    parser.add_argument("--alert-share", type=float, default=0.0,
                        help="share of training clips with an alert in the target (0.2 cost every noise kind)")
    parser.add_argument("--gain-taps", type=int, default=GAIN_TAPS,
                        help="half-length of the gain's impulse response, samples at 16 kHz (the weights carry it)")
    parser.add_argument("--init", help="start from these exported weights (fine-tuning) instead of at random")
    parser.add_argument("--no-urbansound", action="store_true",
                        help="leave UrbanSound8K (CC BY-NC 3.0) out of the training noise")
    parser.add_argument("--alerts", help="a folder of cached synthetic alerts (make_realset.py's synth folder) to keep in "
                                         "the target besides the real ones")
    parser.add_argument("--export-only", action="store_true", help="export the checkpoint's best weights without training")
    parser.add_argument("--write-pack", metavar="FOLDER",
                        help="write the training side's recordings to FOLDER, for --data on a machine without them, and stop")
    parser.add_argument("--hidden", type=int, default=HIDDEN, help="the dense and recurrent layers' width")
    parser.add_argument("--device", default="cpu", help="where the network trains (cpu, cuda)")
    parser.add_argument("--workers", type=int, default=0, help="processes mixing training batches (0: the training process)")
    parser.add_argument("--no-dev", action="store_true",
                        help="no development loss (only a pack travelled): the weights kept are the average at the end")
    parser.add_argument("--export-every", type=int, default=0,
                        help="also export the averaged weights every this many steps (with --no-dev)")
    parser.add_argument("--judge", metavar="WEIGHTS",
                        help="measure exported weights' development loss (weights trained with --no-dev) and export "
                             "them again with it, with their fixture and report, to --weights, --fixture and --report")
    parser.add_argument("--weights", default="training/data/Suppressor.safetensors",
                        help="where the best weights go (Sources/EarshotEnhance/Resources/Suppressor.safetensors ships them)")
    parser.add_argument("--fixture", default="training/data/suppressor_parity.json",
                        help="the parity fixture for those weights (Tests/EarshotEnhanceTests/Fixtures/suppressor_parity.json)")
    parser.add_argument("--report", default="training/data/suppressor-report.json",
                        help="the training history of those weights (training/SUPPRESSOR.json for the shipped ones)")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, os.cpu_count() or 1) if args.device == "cpu" and not args.workers else 2)
    if args.write_pack:
        write_pack(args.data, args.write_pack)
        return
    if args.judge:
        judge(args)
        return
    if os.path.exists(os.path.join(args.data, PACK)) and not args.no_dev:
        parser.error(f"{args.data} is a pack, which holds no development side: give --no-dev")
    if args.steps == 0 and not math.isfinite(args.minutes):
        parser.error("--steps 0 needs --minutes: the schedule lasts that long")
    if args.export_only:
        state = torch.load(args.checkpoint, map_location="cpu")
        model = Suppressor(state["bestModel"]["input.weight"].shape[0])
        model.load_state_dict(state["bestModel"])
        write_outputs(model, {"gainTaps": 64, **state["args"], "weights": args.weights, "fixture": args.fixture,
                              "report": args.report},
                      state["step"], state["best"],
                      state["history"])
        return
    if not 1 <= args.gain_taps <= FRAME // 2:
        parser.error(f"--gain-taps must be 1 to {FRAME // 2} samples, not {args.gain_taps}")
    if not 1 <= args.hidden <= 1024:  # as SuppressorNetwork accepts
        parser.error(f"--hidden must be 1 to 1024, not {args.hidden}")
    gain_taps = args.gain_taps
    rng = np.random.default_rng(args.seed)
    train = Mixer(args.data, "train", 24, args.alerts, urban=not args.no_urbansound, alert_share=args.alert_share)
    dev_batches = [] if args.no_dev else development_batches(args.data)
    device = torch.device(args.device)
    state = torch.load(args.checkpoint, map_location=device) if args.resume and os.path.exists(args.checkpoint) else None

    if args.init:
        model = load_weights(args.init)
    elif state:  # the checkpoint's width; its weights are loaded below
        model = Suppressor(state["model"]["input.weight"].shape[0])
    else:
        model = Suppressor(args.hidden)
        with torch.no_grad():  # input normalisation from the training data
            feats = torch.cat([features(spectra(train.batch(rng, 16, 3.0)[0]).abs() ** 2).reshape(-1, BINS) for _ in range(4)])
            model.mean.copy_(feats.mean(0))
            model.std.copy_(feats.std(0).clamp_min(0.1))
    model.to(device)
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    # The weights judged and exported are an exponential average of the trained ones, so that a
    # run stopped anywhere in the schedule (to be resumed later) still has settled weights.
    average = {k: v.clone() for k, v in model.state_dict().items()}
    step, best, history = 0, float("inf"), []
    best_state = {k: v.clone() for k, v in average.items()}
    pathlib.Path(args.checkpoint).parent.mkdir(parents=True, exist_ok=True)
    if state:
        model.load_state_dict(state["model"]); optimiser.load_state_dict(state["optimiser"])
        step, best, history, best_state = state["step"], state["best"], state["history"], state["bestModel"]
        average = state["average"]
        gain_taps = state["args"].get("gainTaps", 64)  # a run goes on with the filter it began with
        rng = np.random.default_rng(args.seed + step)
        print(f"resumed at step {step} of {args.steps} (best development loss {best:.5f})", flush=True)
    taper = torch.from_numpy(taper_matrix(gain_taps)).to(device)
    # A licence is inherited: from the weights fine-tuned, and from the run resumed.
    licence = None if args.no_urbansound else URBAN_LICENCE
    if isinstance(train.bank, Pack):
        licence = train.bank.licence
    if args.init:
        from safetensors import safe_open
        with safe_open(args.init, "pt") as f:
            licence = (f.metadata() or {}).get("licence") or licence
    if state:
        licence = state["args"].get("licence") or licence
    start = time.time()

    judged = Suppressor(model.hidden).to(device)

    def dev_loss():
        if not dev_batches:
            return float("nan")
        judged.load_state_dict(average)
        judged.eval()
        with torch.no_grad():
            return float(np.mean([loss_fn(judged, taper, n.to(device), t.to(device)).item() for n, t in dev_batches]))

    def keep(value):
        """The averaged weights are kept when they beat the best development loss, or always
        where there is none (--no-dev)."""
        nonlocal best, best_state
        if dev_batches and not value < best:
            return
        best = value if dev_batches else best
        best_state = {k: v.clone() for k, v in average.items()}

    def settings():
        return {"steps": step, "batch": args.batch, "seconds": args.seconds, "seed": args.seed, "licence": licence,
                "weights": args.weights, "fixture": args.fixture, "report": args.report, "gainTaps": gain_taps}

    batches = None
    if args.workers:
        batches = iter(torch.utils.data.DataLoader(Batches(train, args.batch, args.seconds, args.seed + step),
                                                   batch_size=None, num_workers=args.workers, prefetch_factor=4,
                                                   persistent_workers=True))

    def save():
        # Written aside and renamed, so a run killed mid-write keeps its previous checkpoint.
        partial = args.checkpoint + ".partial"
        torch.save({"model": model.state_dict(), "optimiser": optimiser.state_dict(), "step": step, "best": best,
                    "bestModel": best_state, "average": average, "history": history,
                    "args": {"steps": args.steps, "batch": args.batch, "seconds": args.seconds, "seed": args.seed,
                             "licence": licence, "weights": args.weights, "fixture": args.fixture,
                             "gainTaps": gain_taps}}, partial)
        os.replace(partial, args.checkpoint)

    while (args.steps == 0 or step < args.steps) and time.time() - start < args.minutes * 60:
        # Cosine decay over the whole schedule (of steps, or of the clock with --steps 0), after a
        # short warm-up: a resumed run goes on exactly where it stopped.
        progress = (time.time() - start) / (args.minutes * 60) if args.steps == 0 else step / args.steps
        lr = args.lr * min(1, (step + 1) / 100) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1, progress))))
        for group in optimiser.param_groups:
            group["lr"] = lr
        noisy, target = next(batches) if batches is not None else train.batch(rng, args.batch, args.seconds)
        loss = loss_fn(model, taper, noisy.to(device, non_blocking=True), target.to(device, non_blocking=True),
                       args.complex_share, args.sisdr_weight)
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        step += 1
        with torch.no_grad():
            decay = min(0.998, (1 + step) / (10 + step))
            for k, v in model.state_dict().items():
                average[k].mul_(decay).add_(v, alpha=1 - decay) if v.dtype.is_floating_point else average[k].copy_(v)
        if step % 100 == 0:
            value = dev_loss()
            history.append({"step": step, "minutes": round((time.time() - start) / 60, 1), "train": round(loss.item(), 5),
                            "dev": round(value, 5) if dev_batches else None, "lr": round(lr, 6)})
            print(json.dumps(history[-1]), flush=True)
            keep(value)
            save()
        if args.export_every and step % args.export_every == 0:
            judged.load_state_dict(average)
            write_outputs(judged.cpu(), settings(), step, best, history)
            judged.to(device)
    keep(dev_loss())
    save()
    model.load_state_dict(best_state)
    print(f"at step {step} of {args.steps or 'the clock'}; best development loss {best:.5f}")
    write_outputs(model.cpu(), settings(), step, best, history)


def development_batches(data):
    """The same 96 clips of 4 s for every run and every model, so that development losses compare."""
    dev = Mixer(data, "dev", 8)
    rng = np.random.default_rng(12345)
    return [dev.batch(rng, 16, 4.0) for _ in range(6)]


def judge(args):
    from safetensors import safe_open
    with safe_open(args.judge, "pt") as f:
        metadata = f.metadata() or {}
    training = json.loads(metadata.get("training", "{}"))
    taps = json.loads(metadata.get("stft", "{}")).get("gainTaps", 64)  # weights without it had ±4 ms
    model = load_weights(args.judge).eval()
    taper = torch.from_numpy(taper_matrix(taps))
    with torch.no_grad():
        loss = float(np.mean([loss_fn(model, taper, n, t).item() for n, t in development_batches(args.data)]))
    print(f"{args.judge}: development loss {loss:.5f}")
    write_outputs(model, {"batch": training.get("batch", args.batch), "seconds": training.get("seconds", args.seconds),
                          "seed": training.get("seed", args.seed), "licence": metadata.get("licence"),
                          "weights": args.weights, "fixture": args.fixture, "report": args.report, "gainTaps": taps},
                  training.get("steps", 0), loss, [])


URBAN_LICENCE = "trained with UrbanSound8K (CC BY-NC 3.0): for non-commercial use only"


def write_outputs(model, settings, step, best, history):
    weights = sum(p.numel() for p in model.parameters())
    metadata = {
        "stft": json.dumps({"rate": RATE, "frame": FRAME, "hop": HOP, "gainTaps": settings["gainTaps"]}),
        "layers": json.dumps({"bins": BINS, "hidden": model.hidden}),
        "training": json.dumps({"steps": step, "batch": settings["batch"], "seconds": settings["seconds"],
                                "seed": settings["seed"], "devLoss": round(best, 5) if math.isfinite(best) else None,
                                "weights": weights}),
    }
    if settings["licence"]:
        metadata["licence"] = settings["licence"]
    export(model, settings["weights"], metadata)
    write_fixture(model, pathlib.Path(settings["fixture"]))
    pathlib.Path(settings["report"]).write_text(json.dumps({"steps": step, "devLoss": best if math.isfinite(best) else None,
                                                                  "weights": weights,
                                                                  "history": history}, indent=1))
    print(f"wrote {settings['weights']} ({weights} weights), {settings['fixture']} and {settings['report']}")


if __name__ == "__main__":
    main()

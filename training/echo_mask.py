"""The learned residual echo mask that `EchoMask` runs after the echo canceller's suppressor.

What `earshot aec --suppression-floor 0 --echo-mask 0` leaves (the linear filter alone) goes
through a small network — the log powers of the microphone, that output and the filter's echo
estimate in the canceller's 5 ms frames (160-point FFT, 81 bins) → dense 128 → GRU 128 → a gain
per bin — trained so the gains leave the near talker: the compressed (|·|^0.3) spectral error
against the near end alone. Training scenes come from training speakers only, through two
generators: the soft and linear loudspeakers of `eval/capture/evaluate.py` (far end alone, near
end alone, double talk after 12 s, a moved path), and scenes whose near talker comes and goes
throughout, −10…+15 dB under the echo, with the capture side's slow gain changes (up to ±6 dB),
noise 25–45 dB down and paths that move (`--device-like` adds such scenes through a third
loudspeaker family, `device_like`). It is judged on the real device recordings
(`eval/capture/real_devices.py`'s measures) and on the development speakers' hard-loudspeaker
scenes, a model family no generator holds. `train --over suppressor` trains instead a mask that
also reads the suppressor's output (`earshot aec --echo-mask 0`, kept in each scene) and acts
after it, its gains measured over that output (measured, not shipped: docs/capture.md).

    .venv/bin/python training/echo_mask.py scenes --out training/data/echo-mask [--device-like 150]
    .venv/bin/python training/echo_mask.py train --out training/data/echo-mask --steps 2000
    .venv/bin/python training/echo_mask.py export   # the shipped weights and their Swift parity fixture
    .venv/bin/python training/echo_mask.py judge --out training/data/echo-mask --floors none,-25 --exponents 1,0.5
    .venv/bin/python training/echo_mask.py judge --scenes soft-train --floors none --exponents 1 --after-suppressor 0.05,0.1,0.2,0.35
    .venv/bin/python training/echo_mask.py train --over suppressor --steps 3000 --weights training/data/echo-mask/mask-over.pt
"""
import argparse
import os
import sys
import time

import numpy as np
import scipy.signal
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from eval.capture import evaluate as ev  # noqa: E402
from eval.capture.real_devices import recordings, worst_window  # noqa: E402
from training import realaudio  # noqa: E402

FFT, HOP = 160, 80  # the canceller's frames at 16 kHz
WINDOW = torch.sqrt(torch.hann_window(FFT, periodic=True))


def stft(x):
    return torch.stft(torch.as_tensor(np.asarray(x, dtype=np.float32)), FFT, HOP, window=WINDOW, return_complex=True, center=True)


def features(mic, out, suppressed=None):
    """Log powers of the microphone, the filter's output and its echo estimate, and of the
    suppressor's output where the mask is trained to follow it."""
    heard = (mic, out, mic - out) + (() if suppressed is None else (suppressed,))
    return torch.cat([torch.log10(x.abs() ** 2 + 1e-10) for x in heard], 0).T


class Mask(nn.Module):
    def __init__(self, hidden=128, inputs=3):
        super().__init__()
        self.inputs = inputs
        self.inp, self.gru, self.out = nn.Linear(inputs * (FFT // 2 + 1), hidden), nn.GRU(hidden, hidden, batch_first=True), nn.Linear(hidden, FFT // 2 + 1)

    def forward(self, x):
        z, _ = self.gru(torch.relu(self.inp((x + 5) / 3)))
        return torch.sigmoid(self.out(z))


def spectra(mic, linear):
    """The microphone's and the filter's spectra, the filter's never louder than the microphone's
    (as the canceller passes the microphone on where its filter adds)."""
    d, e = stft(mic), stft(linear)
    return d, torch.where(e.abs() > d.abs(), d, e)


def masked(model, mic, linear, floor_db=None, exponent=1.0, suppressed=None):
    """The mask (floored, raised to `exponent`) over the filter's output, or, given `suppressed`
    (`earshot aec`'s own output), over that: the network's gains after the suppressor's. A mask
    that reads the suppressor's output is always given it."""
    d, e = spectra(mic, linear)
    with torch.no_grad():
        m = model(features(d, e, stft(suppressed) if model.inputs == 4 else None)[None])[0].T
    if floor_db is not None:
        m = torch.clamp(m, min=10 ** (floor_db / 20))
    if suppressed is not None:
        e = stft(suppressed)
    frames = min(e.shape[1], m.shape[1])
    return torch.istft(m[:, :frames] ** exponent * e[:, :frames], FFT, HOP, window=WINDOW, center=True, length=len(mic)).numpy()


def save_whole(path, write):
    """`write(file)` to a temporary file beside `path`, then renamed: a run stopped midway leaves
    no half-written scene or weights."""
    temporary = path + ".part"
    with open(temporary, "wb") as f:
        write(f)
    os.replace(temporary, path)


def linear_output(binary, mic, far):
    return np.asarray(ev.earshot(binary, mic, far, ["--suppression-floor", "0", "--echo-mask", "0"]))[:len(mic)]


def suppressed_output(binary, mic, far):
    """What the canceller passes on without the mask: the linear filter and its suppressor."""
    return np.asarray(ev.earshot(binary, mic, far, ["--echo-mask", "0"]))[:len(mic)]


def device_like(rng, x):
    """A third loudspeaker family, for training only (the development scenes' hard loudspeaker is
    never heard): a small driver (a 150–400 Hz high-pass), memory before the nonlinearity (a short
    decaying filter), a polynomial of second to fifth order, the cabinet's upper limit (a 4.5–7.5
    kHz low-pass), and the capture side's fast compressor (2:1–5:1 over a threshold 6–20 dB under
    the peaks, following the level over 5–30 ms)."""
    rate = ev.RATE
    peak = np.percentile(np.abs(x), 99.9) + 1e-9
    u = scipy.signal.lfilter(*scipy.signal.butter(2, rng.uniform(150, 400), "highpass", fs=rate), x / peak)
    u = scipy.signal.lfilter(np.exp(-np.arange(int(rng.integers(2, 8))) * rng.uniform(0.5, 2)), 1, u)
    u /= np.percentile(np.abs(u), 99.9) + 1e-9
    y = u + rng.uniform(0, 0.3) * u ** 2 - rng.uniform(0, 0.4) * u ** 3 + rng.uniform(-0.1, 0.2) * u ** 5
    y = scipy.signal.lfilter(*scipy.signal.butter(2, rng.uniform(4500, 7500), "lowpass", fs=rate), y)
    a = np.exp(-1 / (rng.uniform(0.005, 0.03) * rate))
    envelope = scipy.signal.lfilter([1 - a], [1, -a], np.abs(y)) + 1e-9
    threshold = np.percentile(np.abs(y), 99.9) * 10 ** (-rng.uniform(6, 20) / 20)
    y *= np.minimum(1, (threshold / envelope) ** (1 - 1 / rng.uniform(2, 5)))
    return scipy.signal.lfilter(*scipy.signal.butter(1, 20, "highpass", fs=rate), y) * peak


def echo_of(rng, bank, far, model):
    """The far end through a loudspeaker of `model` ("soft", "linear" or "device") into a room,
    a device's loudspeaker on its own clock in a third of them."""
    if model != "device":
        return ev.loudspeaker(far, ev.room(rng, bank), rng.uniform(0, 0.3), 0, rng=rng, model=model)
    drift = rng.uniform(-200, 200) if rng.random() < 0.3 else 0
    return ev.loudspeaker(device_like(rng, far), ev.room(rng, bank), rng.uniform(0, 0.3), 0, drift_ppm=drift, rng=rng)


def coming_and_going(rng, bank, count, models=("soft", "linear")):
    """Scenes of 20 s whose near talker comes and goes throughout."""
    rate, n = ev.RATE, 20 * ev.RATE
    for i in range(count):
        far, speaker = ev.talk(rng, bank, 20)
        near, _ = ev.talk(rng, bank, 20, exclude=speaker)
        model = models[i % len(models)]
        echo = echo_of(rng, bank, far, model)
        if rng.random() < 0.3:
            moved = echo_of(rng, bank, far, model)
            at = int(rng.uniform(6, 14) * rate)
            echo[at:] = moved[at:]
        t = np.arange(n) / rate
        echo *= 10 ** (rng.uniform(0, 6) * np.sin(2 * np.pi * t / rng.uniform(2, 8) + rng.uniform(0, 6.3)) / 20)
        talking, s = np.zeros(n), int(rng.uniform(2, 6) * rate)
        while s < n:
            d = int(rng.uniform(1.5, 5) * rate)
            talking[s:s + d] = 1
            s += d + int(rng.uniform(1, 5) * rate)
        if rng.random() < 0.15:
            talking[:] = 0
        near = near * talking * 10 ** (-rng.uniform(-10, 15) / 20)
        noise = realaudio.segment(rng, bank.noise[int(rng.integers(len(bank.noise)))], n)
        noise *= 10 ** ((ev.level(echo) - rng.uniform(25, 45) - ev.level(noise)) / 20)
        yield {"mic": np.clip(near + echo + noise, -1, 1), "far": far, "near": near}


def make_scenes(args):
    bank = realaudio.Bank(args.data, "train")
    if not bank:
        sys.exit(f"no LibriSpeech speech or noise under {args.data}: the scenes need ../shared/data")
    usual = [s for model, seed in (("soft", 501), ("linear", 502), ("soft", 503))
             for s in ev.scenes(bank, seed=seed, per_kind=args.per_kind, model=model) if s["kind"] != "drift"]
    scenes = usual + list(coming_and_going(np.random.default_rng(11), bank, args.coming_and_going))
    scenes += list(coming_and_going(np.random.default_rng(12), bank, args.device_like, models=("device",)))
    os.makedirs(args.out, exist_ok=True)
    for i, s in enumerate(scenes):
        path = os.path.join(args.out, f"scene{i:04d}.npz")
        # The same seeds make the same scene: only what is missing is run (a scene is read only to
        # see what it holds; its filter output is reused).
        linear = None
        if os.path.exists(path):
            with np.load(path) as have:
                if "suppressed" in have.files:
                    continue
                linear = have["linear"]
        if linear is None:
            linear = linear_output(args.earshot, s["mic"], s["far"])
        shipped = suppressed_output(args.earshot, s["mic"], s["far"])
        save_whole(path, lambda f: np.savez(f, mic=s["mic"], near=s["near"], linear=linear, suppressed=shipped))
    print(f"{len(scenes)} scenes in {args.out}")


def train(args):
    examples = []
    for name in sorted(f for f in os.listdir(args.out) if f.startswith("scene") and f.endswith(".npz")):
        with np.load(os.path.join(args.out, name)) as z:
            d, e = spectra(z["mic"], z["linear"])
            if args.over == "filter":
                examples.append((features(d, e), e.abs().T, stft(z["near"]).abs().T))
            elif "suppressed" in z:
                s = stft(z["suppressed"])
                examples.append((features(d, e, s), s.abs().T, stft(z["near"]).abs().T))
            else:
                sys.exit(f"{name} holds no suppressor output: run `echo_mask.py scenes` again")
    if not examples:
        sys.exit(f"no scenes in {args.out}: run `echo_mask.py scenes` first")
    torch.manual_seed(0)
    torch.set_num_threads(args.threads or os.cpu_count() or 1)
    model, rng, frames, start = Mask(inputs=3 if args.over == "filter" else 4), np.random.default_rng(0), 600, time.time()
    optimiser = torch.optim.Adam(model.parameters(), 1e-3)
    for step in range(args.steps):
        batch = []
        for _ in range(16):
            x, e, s = examples[rng.integers(len(examples))]
            at = rng.integers(0, max(1, len(x) - frames))
            batch.append((x[at:at + frames], e[at:at + frames], s[at:at + frames]))
        n = min(len(b[0]) for b in batch)
        x, e, s = (torch.stack([b[i][:n] for b in batch]) for i in range(3))
        # The compressed spectral error, and what of the near end the mask took counted again
        # `asymmetry` times over: a talker made quieter is worse than echo left a little louder.
        shortfall = (s + 1e-8) ** 0.3 - (model(x) * e + 1e-8) ** 0.3
        loss = (shortfall ** 2 + args.asymmetry * torch.relu(shortfall) ** 2).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % 100 == 0:
            print(f"step {step}: loss {loss.item():.5f} ({time.time() - start:.0f} s)", flush=True)
        if step % 500 == 499:
            save_whole(args.weights or os.path.join(args.out, "mask.pt"), lambda f: torch.save(model.state_dict(), f))
    save_whole(args.weights or os.path.join(args.out, "mask.pt"), lambda f: torch.save(model.state_dict(), f))


def load_mask(path):
    if not os.path.exists(path):
        sys.exit(f"no {path}: run `echo_mask.py train` first")
    weights = torch.load(path)
    model = Mask(inputs=weights["inp.weight"].shape[1] // (FFT // 2 + 1))
    model.load_state_dict(weights)
    model.eval()
    return model


def export(args):
    """The weights as `EchoMask` reads them (the input's scaling folded into the first layer), and
    a parity fixture: the powers of 0.4 s of a training scene and the gains PyTorch gives them."""
    import json
    from safetensors.torch import save
    model = load_mask(args.weights or os.path.join(args.out, "mask.pt"))
    if model.inputs != 3:
        sys.exit("export: EchoMask reads three inputs; a mask trained --over suppressor is measured with `judge` only")
    with torch.no_grad():
        w = model.inp.weight / 3  # (x + 5) / 3
        b = model.inp.bias + model.inp.weight.sum(1) * 5 / 3
        tensors = {"input.weight": w, "input.bias": b, "output.weight": model.out.weight, "output.bias": model.out.bias,
                   "gru.weight_ih": model.gru.weight_ih_l0, "gru.weight_hh": model.gru.weight_hh_l0,
                   "gru.bias_ih": model.gru.bias_ih_l0, "gru.bias_hh": model.gru.bias_hh_l0}
        metadata = {"model": "residual echo mask: log powers of microphone, filter output and echo estimate (81 bins each, 5 ms frames at 16 kHz) -> dense 128 (ReLU) -> GRU 128 -> 81 gains",
                    "trained": "training/echo_mask.py (docs/capture.md says with which settings)",
                    "licence": "trained on LibriSpeech (CC BY 4.0), Speech Commands noises (CC BY 4.0) and IoSR room responses (MIT)"}
        blob = save({k: v.detach().contiguous().float() for k, v in tensors.items()}, metadata=metadata)
        save_whole(args.to, lambda f: f.write(blob))
        # 0.4 s of a training scene around the near talker's first word: echo alone, then both.
        scene = next((z for z in (np.load(os.path.join(args.out, name)) for name in sorted(os.listdir(args.out))
                                  if name.startswith("scene") and name.endswith(".npz")) if np.abs(z["near"]).max() > 0), None)
        if scene is None:
            sys.exit(f"no scene with a near talker in {args.out}: run `echo_mask.py scenes` first")
        onset = int(np.argmax(np.abs(scene["near"]) > 0.01 * np.abs(scene["near"]).max())) // HOP
        d, e = spectra(scene["mic"], scene["linear"])
        first, frames = max(0, onset - 40), 80
        # Six digits, as the fixture holds them: both sides read the same numbers.
        powers = [np.vectorize(lambda v: float(f"{v:.6g}"))((x.abs() ** 2).T[first:first + frames].numpy()).astype(np.float32)
                  for x in (d, e, d - e)]
        gains = model(torch.cat([torch.log10(torch.from_numpy(x) + 1e-10) for x in powers], 1)[None])[0]
    fixture = {"generator": "training/echo_mask.py export", "frames": frames,
               **{name: [[float(f"{v:.6g}") for v in row] for row in x] for name, x in zip(("microphone", "output", "echo"), powers)},
               "gains": [[round(float(v), 7) for v in row] for row in gains]}
    save_whole(args.fixture, lambda f: f.write(json.dumps(fixture).encode()))
    print(f"{args.to}, {args.fixture}")


def judge(args):
    model = load_mask(args.weights or os.path.join(args.out, "mask.pt"))
    settings = [(float(f) if f != "none" else None, float(p), False) for f in args.floors.split(",") for p in args.exponents.split(",")]
    settings += [(None, float(p), True) for p in args.after_suppressor.split(",") if p]
    if model.inputs == 4:  # a mask that reads the suppressor's output acts only after it
        settings = [s for s in settings if s[2]]
        if not settings:
            sys.exit("judge: a mask trained --over suppressor acts after the suppressor: give --after-suppressor")
    real = [(name, talk, mic, far, linear_output(args.earshot, mic, far), suppressed_output(args.earshot, mic, far))
            for name, talk, mic, far in recordings(os.path.join(args.data, "aec", "real"))]
    if not any(r[1] == "st" for r in real) or not any(r[1] == "dt" for r in real):
        sys.exit(f"no real far-end and double-talk recordings under {os.path.join(args.data, 'aec', 'real')}")
    model_family, split = args.scenes.split("-")
    bank = realaudio.Bank(args.data, split)
    if not bank:
        sys.exit(f"no LibriSpeech speech or noise under {args.data}: the scenes need ../shared/data")
    seed, per_kind = (2031, 6) if split == "dev" else (77, 8)  # as make eval-capture, and where the suppressor was chosen
    seed, per_kind = args.scene_seed or seed, args.scenes_per_kind or per_kind
    hard = [(s, linear_output(args.earshot, s["mic"], s["far"]), suppressed_output(args.earshot, s["mic"], s["far"]))
            for s in ev.scenes(bank, seed=seed, per_kind=per_kind, model=model_family) if s["kind"] in ("far-only", "double-talk")]
    rate = ev.RATE
    print(f"| floor, exponent, after the suppressor | real: median far-end ERLE (each) | worst 0.5 s | AECMOS echo far end | AECMOS echo / degradation, double talk | {args.scenes} scenes: ERLE far-only, double-talk PESQ, AECMOS degradation |")
    print("|---|---|---|---|---|---|")
    for floor, exponent, after in settings:
        rows = []
        for name, talk, mic, far, linear, shipped in real:
            out = masked(model, mic, linear, floor, exponent, shipped if after else None)
            erle = ev.level(mic[2 * rate:]) - ev.level(out[2 * rate:]) if talk == "st" else float("nan")
            rows.append((talk, erle, worst_window(mic, out), *ev.aecmos(far, mic, out, 0, len(mic), talk)))
        st, dt = [r for r in rows if r[0] == "st"], [r for r in rows if r[0] == "dt"]
        far_only, pesq, degradation = [], [], []
        for s, linear, shipped in hard:
            out = masked(model, s["mic"], linear, floor, exponent, shipped if after else None)
            if s["kind"] == "far-only":
                far_only.append(ev.erle(s["mic"], out, 6 * rate, 12 * rate))
            else:
                pesq.append(ev.pesq_near(s["near"], out, 12 * rate, 20 * rate))
                degradation.append(ev.aecmos(s["far"], s["mic"], out, 12 * rate, 20 * rate, "dt")[1])
        print(f"| {floor}, {exponent}, {after} | {np.median([r[1] for r in st]):.1f} dB ({', '.join(f'{r[1]:.1f}' for r in st)}) | {max(r[2] for r in rows):+.1f} dB | "
              f"{np.mean([r[3] for r in st]):.2f} | {np.mean([r[3] for r in dt]):.2f} / {np.mean([r[4] for r in dt]):.2f} | "
              f"{np.median(far_only):.1f} dB, {np.nanmedian(pesq):.2f}, {np.median(degradation):.2f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["scenes", "train", "judge", "export"])
    parser.add_argument("--out", default="training/data/echo-mask")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--earshot", default=".build/release/earshot")
    parser.add_argument("--per-kind", type=int, default=12, help="scenes of each kind from each of evaluate.py's three seeds")
    parser.add_argument("--coming-and-going", type=int, default=150, help="scenes whose near talker comes and goes")
    parser.add_argument("--device-like", type=int, default=0,
                        help="more such scenes through a third loudspeaker family (memory, a polynomial, a capture-side compressor, drift)")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--threads", type=int, help="CPU threads for training (all by default)")
    parser.add_argument("--asymmetry", type=float, default=0.0,
                        help="the near end's shortfall counted this many times more (0: the plain compressed spectral error)")
    parser.add_argument("--over", choices=["filter", "suppressor"], default="filter",
                        help="train: the mask over the linear filter's output (3 inputs), or over the suppressor's, which it also reads (4)")
    parser.add_argument("--weights", help="the network's weights (default: mask.pt in --out)")
    parser.add_argument("--floors", default="none,-25", help="deepest gains in dB, comma-separated ('none': no floor)")
    parser.add_argument("--exponents", default="1,0.5", help="the mask raised to these powers, comma-separated (under 1: gentler)")
    parser.add_argument("--scenes", choices=["hard-dev", "soft-train", "linear-train"], default="hard-dev",
                        help="the simulated scenes judged beside the real recordings: the hard loudspeaker's development scenes, "
                             "or the training scenes the suppressor's settings were chosen on")
    parser.add_argument("--scene-seed", type=int, help="another seed for the simulated scenes")
    parser.add_argument("--scenes-per-kind", type=int, help="simulated scenes of each kind judged (6 development, 8 training)")
    parser.add_argument("--after-suppressor", default="0.1,0.2,0.35",
                        help="exponents of the mask applied after the shipped suppressor (over `earshot aec`'s output), comma-separated")
    parser.add_argument("--to", default="Sources/EarshotCapture/Resources/EchoMask.safetensors", help="export: where the weights go")
    parser.add_argument("--fixture", default="Tests/EarshotCaptureTests/Fixtures/echo_mask_parity.json", help="export: the parity fixture")
    args = parser.parse_args()
    if args.step not in ("train", "export") and not os.access(args.earshot, os.X_OK):
        sys.exit(f"{args.earshot}: no earshot binary there (make release, or --earshot)")
    if args.step != "scenes" and not os.path.isdir(args.out):
        sys.exit(f"{args.out}: no such folder; run `echo_mask.py scenes --out {args.out}` first")
    {"scenes": make_scenes, "train": train, "judge": judge, "export": export}[args.step](args)


if __name__ == "__main__":
    main()

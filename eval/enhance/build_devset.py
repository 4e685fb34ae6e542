"""Build the speech-enhancement development set from ../shared/data (seeded, reproducible).

Speech: Free Spoken Digit Dataset recordings (8 kHz, strung into digit sequences, upsampled)
and espeak-ng sentences in several voices. Noise: the real recordings in shared/data/noise
(dishes, a cat, an exercise bike, a running tap), pink and white noise, and babble built from
other talkers. SNRs −5, 0, 5, 10, 15 dB; half the items are dry, half reverberant (IoSR
office responses, a different azimuth for speech and noise). Half start with half a second of
background alone, half start with speech. Clean references are the (reverberant) speech alone.
"""
import argparse
import json
import pathlib
import random
import subprocess
import tempfile

import numpy as np
import soundfile as sf
from scipy.signal import fftconvolve, resample_poly

RATE = 16_000
SENTENCES = [
    "The birch canoe slid on the smooth planks.", "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.", "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.", "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.", "Four hours of steady work faced us.",
    "A large size in stockings is hard to sell.", "The boy was there when the sun rose.",
    "A rod is used to catch pink salmon.", "The source of the huge river is the clear spring.",
    "Kick the ball straight and follow through.", "Help the woman get back to her feet.",
    "A pot of tea helps to pass the evening.", "Smoky fires lack flame and heat.",
]
VOICES = ["en-us", "en-gb", "en-us+f3", "en-gb+m3", "en-us+f2", "en+m5", "en-gb-scotland", "en-us+m7"]


def espeak(text, voice, speed):
    with tempfile.NamedTemporaryFile(suffix=".wav") as f:
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", f.name, text], check=True)
        x, rate = sf.read(f.name)
    return resample_poly(x, RATE, rate)


def digits(data, rng):
    speaker = rng.choice(["george", "jackson", "lucas", "nicolas", "theo", "yweweler"])
    parts = []
    for _ in range(rng.randint(5, 8)):
        x, rate = sf.read(data / "speech/fsdd" / f"{rng.randint(0, 9)}_{speaker}_{rng.randint(0, 49)}.wav")
        parts += [resample_poly(x, RATE, rate), np.zeros(int(rng.uniform(0.05, 0.25) * RATE))]
    return np.concatenate(parts)


def noise_clip(data, kind, length, rng):
    if kind == "babble":
        talkers = [espeak(rng.choice(SENTENCES) + " " + rng.choice(SENTENCES), rng.choice(VOICES), rng.randint(140, 190))
                   for _ in range(6)]
        out = np.zeros(length)
        for t in talkers:
            t = np.tile(t, length // len(t) + 1)
            start = rng.randint(0, len(t) - length)
            out += t[start:start + length] / (np.std(t) + 1e-9)
        return out
    x, rate = sf.read(data / "noise" / f"{kind}.wav")
    x = x if x.ndim == 1 else x[:, 0]
    start = rng.randint(0, len(x) - length - 1)
    return x[start:start + length]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="eval/data/enhance")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    data, out = pathlib.Path(args.data), pathlib.Path(args.out)
    if not (data / "speech/fsdd").exists():
        raise SystemExit(f"{data}: shared recordings not found (expected speech/fsdd, noise, rir)")
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    noises = ["doing_the_dishes", "dude_miaowing", "exercise_bike", "running_tap", "pink_noise", "white_noise", "babble"]
    rooms = sorted((data / "rir/iosr_room_a").glob("az*.wav"))
    items = []
    n = 0
    for noise_kind in noises:
        for snr in [-5, 0, 5, 10, 15]:
            for reverberant in [False, True]:
                speech = digits(data, rng) if rng.random() < 0.4 else espeak(
                    " ".join(rng.sample(SENTENCES, 2)), rng.choice(VOICES), rng.randint(140, 180))
                speech = speech / (np.abs(speech).max() + 1e-9) * 0.5
                lead = int(0.5 * RATE) if n % 2 == 0 else 0
                clean = np.concatenate([np.zeros(lead), speech, np.zeros(int(0.3 * RATE))])
                noise = noise_clip(data, noise_kind, len(clean), rng)
                if reverberant:
                    h_speech, _ = sf.read(rng.choice(rooms)); h_noise, _ = sf.read(rng.choice(rooms))
                    clean = fftconvolve(clean, h_speech[:, 0])[:len(clean)]
                    noise = fftconvolve(noise, h_noise[:, 0])[:len(noise)]
                active = clean[lead:lead + len(speech)]
                gain = np.sqrt(np.mean(active ** 2) / (np.mean(noise ** 2) + 1e-12) / 10 ** (snr / 10))
                noisy = clean + gain * noise
                peak = max(np.abs(noisy).max(), 1e-9)
                scale = 0.9 / peak if peak > 0.9 else 1.0
                name = f"{n:03d}_{noise_kind}_{snr:+d}dB_{'reverb' if reverberant else 'dry'}"
                sf.write(out / f"{name}_clean.wav", clean * scale, RATE, subtype="FLOAT")
                sf.write(out / f"{name}_noisy.wav", noisy * scale, RATE, subtype="FLOAT")
                items.append({"name": name, "noise": noise_kind, "snr": snr, "reverberant": reverberant, "leadSeconds": lead / RATE})
                n += 1
    (out / "items.json").write_text(json.dumps(items, indent=1))
    print(f"wrote {len(items)} clean/noisy pairs to {out}")


if __name__ == "__main__":
    main()

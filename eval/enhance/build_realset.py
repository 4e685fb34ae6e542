"""Build the enhancement development set of unseen noise from ../shared/data (seeded).

The suppressor trains on some kinds of noise and is judged here on kinds it never hears
(`realaudio.SUPPRESSOR_UNSEEN_URBAN` and the Speech Commands noise recordings, which training
leaves out whole), by speakers and in rooms training never uses:

- speech: LibriSpeech read speech of the development speakers only (`realaudio.Bank("dev")`:
  69 of the 251 speakers), 4–8 s per item;
- noise: UrbanSound8K's dogs barking, gun shots and street music (every recording, slices one
  after another); washing dishes, a cat, an exercise bike and a running tap (whole recordings);
  babble of 4–6 other development speakers;
- SNRs −5, 0, 5, 10, 15 dB over the active speech;
- rooms: a third of the items dry, a third in the measured office (IoSR development azimuths, or
  the seminar room), a third in a simulated shoebox room (pyroomacoustics image method, RT60
  0.2–0.8 s), speech and noise from different positions. Half start with half a second of
  background alone.

The clean reference is the speech with the first 50 ms of its room response (direct sound and
early reflections); late reverberation counts as noise to be removed.
"""
import argparse
import json
import pathlib

import numpy as np
import scipy.signal
import soundfile as sf

from training import realaudio as ra

RATE = 16_000
EARLY = int(0.05 * RATE)
RECORDINGS = ["doing_the_dishes", "dude_miaowing", "exercise_bike", "running_tap"]
NOISES = list(ra.SUPPRESSOR_UNSEEN_URBAN) + RECORDINGS + ["babble"]
ROOMS = ["dry", "measured", "simulated"]


def simulated_pair(rng):
    """Two impulse responses (speech, noise) of one simulated shoebox room."""
    import pyroomacoustics as pra
    size = [rng.uniform(3, 8), rng.uniform(3, 7), rng.uniform(2.4, 3.5)]
    rt60 = rng.uniform(0.2, 0.8)
    absorption, order = pra.inverse_sabine(rt60, size)
    room = pra.ShoeBox(size, fs=RATE, materials=pra.Material(absorption), max_order=min(order, 30))
    mic = [rng.uniform(1, size[0] - 1), rng.uniform(1, size[1] - 1), 1.5]
    room.add_microphone(mic)
    for _ in range(2):
        room.add_source([rng.uniform(0.5, size[0] - 0.5), rng.uniform(0.5, size[1] - 0.5), rng.uniform(1, 1.8)])
    room.compute_rir()
    return [np.asarray(room.rir[0][k]) for k in range(2)]


def align_to_direct(h):
    start = max(0, int(np.argmax(np.abs(h))) - 16)
    return h[start:] / np.sqrt(np.sum(h ** 2))


def slices_of(rng, pool, n):
    """n samples of UrbanSound8K slices of one kind, one after another (10 ms cross-fades)."""
    pieces, total = [], 0
    while total < n:
        x = pool[int(rng.integers(len(pool)))]
        pieces.append(ra.faded(x / (ra.rms(x) + 1e-12)))
        total += len(x)
    return np.concatenate(pieces)[:n]


def noise_of(kind, bank, noise_files, rng, n, speaker):
    if kind in RECORDINGS:
        return ra.segment(rng, noise_files[kind], n)
    if kind in noise_files:
        return slices_of(rng, noise_files[kind], n)
    others = [s for s in range(len(bank.speech)) if s != speaker]
    out = np.zeros(n)
    for s in rng.choice(others, int(rng.integers(4, 7)), replace=False):
        x = ra.segment(rng, bank.speech[s], n)
        out += x / (ra.rms(x) + 1e-12)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="eval/data/enhance-unseen")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--per-cell", type=int, default=1, help="items per noise, SNR and room")
    args = parser.parse_args()
    data, out = pathlib.Path(args.data), pathlib.Path(args.out)
    bank = ra.Bank(str(data), "dev")
    if not bank:
        raise SystemExit(f"{data}: shared recordings not found (expected speech/librispeech and noise)")
    noise_files = {kind: ra.load(str(data / "noise" / f"{kind}.wav")) for kind in RECORDINGS}
    noise_files.update({kind: ra.urban_kind(str(data), kind) for kind in ra.SUPPRESSOR_UNSEEN_URBAN})
    missing = [kind for kind, x in noise_files.items() if len(x) == 0]
    if missing:
        raise SystemExit(f"{data}: no recordings of {', '.join(missing)}")
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    items, n = [], 0
    for kind in NOISES:
        for snr in [-5, 0, 5, 10, 15]:
            for room in ROOMS:
                for _ in range(args.per_cell):
                    speaker = int(rng.integers(len(bank.speech)))
                    utterance = bank.speech[speaker]
                    length = int(rng.uniform(4, 8) * RATE)
                    start = int(rng.integers(0, max(1, len(utterance) - length)))
                    speech = utterance[start:start + length]
                    lead = int(0.5 * RATE) if n % 2 == 0 else 0
                    speech = np.concatenate([np.zeros(lead), speech, np.zeros(int(0.3 * RATE))])
                    total = len(speech)
                    noise = noise_of(kind, bank, noise_files, rng, total, speaker)
                    clean = speech
                    if room != "dry":
                        if room == "measured":
                            picks = rng.choice(len(bank.rooms), 2, replace=False)
                            h_speech, h_noise = bank.rooms[picks[0]], bank.rooms[picks[1]]
                        else:
                            h_speech, h_noise = (align_to_direct(h) for h in simulated_pair(rng))
                        clean = scipy.signal.fftconvolve(speech, h_speech[:EARLY])[:total]
                        speech = scipy.signal.fftconvolve(speech, h_speech)[:total]
                        noise = scipy.signal.fftconvolve(noise, h_noise)[:total]
                    active = speech[lead:total - int(0.3 * RATE)]
                    gain = ra.rms(active) / (ra.rms(noise) + 1e-12) * 10 ** (-snr / 20)
                    noisy = speech + gain * noise
                    level = 10 ** (rng.uniform(-35, -20) / 20) / ra.rms(noisy)
                    level = min(level, 0.95 / np.abs(noisy).max())
                    name = f"{n:03d}_{kind}_{snr:+d}dB_{room}"
                    sf.write(out / f"{name}_clean.wav", (clean * level).astype(np.float32), RATE, subtype="FLOAT")
                    sf.write(out / f"{name}_noisy.wav", (noisy * level).astype(np.float32), RATE, subtype="FLOAT")
                    items.append({"name": name, "noise": kind, "snr": snr, "room": room, "reverberant": room != "dry",
                                  "leadSeconds": lead / RATE, "speaker": bank.speakers[speaker]})
                    n += 1
    (out / "items.json").write_text(json.dumps(items, indent=1))
    print(f"wrote {len(items)} clean/noisy pairs of unseen noise from {len({i['speaker'] for i in items})} development speakers to {out}")


if __name__ == "__main__":
    main()

"""Real-audio training clips for the alert detector (make train).

Each clip is 8 s at 16 kHz: a background drawn from the real recordings of the training split
(LibriSpeech speakers, background recordings, knocks, cries, appliances; babble, music-like
beds, rooms, microphone colour, band limits, levels, clipping, with `--codec` a lossy codec,
with `--real-music` real soundtracks, `--soundtracks` drawing on more of them, with
`--tonal-music` tonal_music.py's pieces, with `--urban` UrbanSound8K's street music and urban
sound) and, in about half of the clips, one alert at -10...+20 dB (`--snr`): a synthetic one from
`earshot synth alert`, a real training clip, with `--package-alerts` a real recording from
Debian's packages, or with `--urban` a real street siren or horn from UrbanSound8K.
`--tonal-music` and `--urban` draw from the split's own seeds and recordings (UrbanSound8K is
non-commercial: leave `--urban` at 0 for weights free of it).
Features (features.py) and per-frame targets are stored in shards of npz files; the
two splits never share a recording, speaker or seed (realaudio.py).
"""
import argparse
import glob
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import soundfile as sf

from training import features as feat
from training import package_alerts
from training import package_music
from training import realaudio as ra
from training import tonal_music

IGNORE = -100
CLIP_SECONDS = 8.0
PER_CLASS = 400  # synthetic alerts of each class
SCENE_SEEDS = {"train": (300_000, "training"), "dev": (310_000, "evaluation")}
CLIP_SEEDS = {"train": 7_000_000, "dev": 8_000_000}


def frame_targets(track, klass, frame_count, loud_db=-30):
    """Per frame: the alert's class where it sounds (within `loud_db` of its loudest frame),
    IGNORE where it is present but quiet (a pause, a tail), 0 where there is none. A street
    recording carries its own traffic under the siren: there only its loudest frames count."""
    targets = np.zeros(frame_count, np.int64)
    if klass is None or not np.any(track):  # no alert, or a stretch of one that is silent (a CO alarm's pause)
        return targets
    squares = np.concatenate([[0], np.cumsum(feat.padded(track) ** 2)])
    starts = np.arange(frame_count) * feat.HOP
    energy = squares[np.minimum(starts + feat.FRAME, len(squares) - 1)] - squares[starts]
    present = energy > energy.max() * 1e-5
    loud = energy >= energy.max() * 10 ** (loud_db / 10)
    targets[present] = IGNORE
    targets[loud] = feat.CLASSES.index(klass)
    return targets


def sounding_on(rng, alert):
    """A real recording as heard once or, half the time, three times with short gaps, as an
    alarm, a horn or a caller would sound it."""
    if rng.random() < 0.5:
        gap = rng.uniform(0.05, 0.8)
        alert = ra.repeated(alert, 3 * len(alert) + 2 * int(gap * ra.RATE), gap)
    return alert


TONAL_SEEDS = {"train": tonal_music.TRAIN_SEEDS, "dev": tonal_music.DEV_SEEDS}


def urban_background(rng, bank, urban, n):
    """Real street music or urban sound from UrbanSound8K, under speech 40 % of the time,
    through a room half the time."""
    music = rng.random() < 0.4
    bed = urban.bed(rng, n, urban.music if music else urban.noise)
    kind = "music" if music else "noise"
    if rng.random() < 0.4:
        bed = bed * 10 ** (-rng.uniform(-5, 20) / 20) + ra.speech_track(rng, bank, n)
        kind = "tv" if music else "noisy_speech"
    if rng.random() < 0.5:
        bed = ra.through_room(rng, bank, bed)
    return bed, ra.URBAN + kind


def make_clip(rng, bank, alerts, scenes, alert_share=0.5, augment=False, classes=ra.ALERTS, street=0.0, snr=(-10, 20),
              codec=0.0, music=None, real_music=0.0, packaged=None, package_share=0.0, tonal=0.0, urban=None,
              urban_share=0.0, split="train"):
    n = int(CLIP_SECONDS * ra.RATE)
    loud_db = -30
    if tonal > 0 and rng.random() < tonal:  # (drawn only when asked: earlier sets stay as they were)
        seed = [TONAL_SEEDS[split], int(rng.integers(1 << 31))]  # the split's own pieces
        bed, kind = ra.background(rng, bank, n, kind=rng.choice(list(ra.MUSIC_KINDS)),
                                  piece=lambda _, seconds: tonal_music.piece(np.random.default_rng(seed), seconds))
        kind = ra.TONAL + kind
    elif urban_share > 0 and rng.random() < urban_share:
        bed, kind = urban_background(rng, bank, urban, n)
    elif real_music > 0 and rng.random() < real_music:  # (drawn only when asked: earlier sets stay as they were)
        bed, kind = ra.background(rng, bank, n, music_bank=music, scenes=scenes, kind=rng.choice(list(ra.MUSIC_KINDS)))
        kind = ra.REAL + kind
    else:
        bed, kind = ra.background(rng, bank, n, scenes=scenes)  # every music-like bed a new piece
    if rng.random() < street / 2:  # traffic, with a siren or without one, so it tells nothing
        bed = bed + ra.traffic(rng, n) * ra.rms(bed) * 10 ** (rng.uniform(-10, 10) / 20)
    klass = None
    track = np.zeros(n)
    if rng.random() < alert_share:
        klass = classes[int(rng.integers(len(classes)))]
        real = bank.alerts[klass]
        if package_share > 0 and packaged.get(klass) and rng.random() < package_share:  # (drawn only when asked)
            alert = sounding_on(rng, packaged[klass][int(rng.integers(len(packaged[klass])))])
            s = int(rng.integers(0, max(1, len(alert) - int(1.5 * ra.RATE))))
            alert = alert[s:s + int(rng.uniform(1.5, 7) * ra.RATE)]
        elif urban_share > 0 and klass in urban.alerts and rng.random() < urban_share:
            alert = urban.alert(rng, klass)
            loud_db = -12
        elif klass == "siren" and rng.random() < street:
            alert = ra.street_siren(rng, rng.uniform(1.5, 7))
        elif real and rng.random() < 0.2:
            alert = sounding_on(rng, real[int(rng.integers(len(real)))])
        else:
            pool = alerts[klass]
            alert = pool[int(rng.integers(len(pool)))]
            s = int(rng.integers(0, max(1, len(alert) - 2 * ra.RATE)))
            alert = alert[s:s + int(rng.uniform(1.5, 7) * ra.RATE)]
        if augment:
            alert = ra.as_sounded(rng, alert, klass)
        alert = alert[:n]
        start = int(rng.integers(0, max(1, n - len(alert) // 2)))
        bed, track = ra.place_alert(rng, bank, alert, bed, rng.uniform(*snr), start)
    mix, track = ra.finish(rng, bed, track)
    if codec > 0 and rng.random() < codec:  # (drawn only when asked: earlier sets stay as they were)
        mix = ra.lossy(rng, mix)
    f = feat.frame_features(mix)
    return f.astype(np.float16), frame_targets(track, klass, len(f), loud_db), kind


SOURCES = {}


def load_sources(data, synth_folder, split, real_music, soundtracks, package_share, urban_share):
    """Once per process: the split's recordings, alerts and scene beds."""
    SOURCES["bank"] = ra.Bank(data, split)
    SOURCES["alerts"] = ra.synthetic_alerts(None, synth_folder, split, PER_CLASS, jobs=1)
    SOURCES["scenes"] = load_scenes(synth_folder)
    SOURCES["music"] = package_music.bank(soundtracks) if real_music > 0 else None
    SOURCES["packaged"] = package_alerts.bank() if package_share > 0 else None
    SOURCES["urban"] = ra.UrbanBank(data, split) if urban_share > 0 else None


def worker(args):
    (index, count, seed, out, alert_share, augment, classes, street, snr, codec, real_music, package_share, tonal,
     urban_share, split) = args
    path = os.path.join(out, f"shard{index:03d}.npz")
    if os.path.exists(path):
        return path
    rng = np.random.default_rng(seed)
    bank, alerts, scenes, music, packaged, urban = (SOURCES[k] for k in ("bank", "alerts", "scenes", "music", "packaged", "urban"))
    frames, targets, kinds = [], [], []
    for _ in range(count):
        f, t, k = make_clip(rng, bank, alerts, scenes, alert_share, augment, classes, street, snr, codec, music, real_music,
                            packaged, package_share, tonal, urban, urban_share, split)
        frames.append(f)
        targets.append(t)
        kinds.append(k)
    np.savez(path + ".tmp.npz", frames=np.stack(frames), targets=np.stack(targets), kinds=np.array(kinds))
    os.replace(path + ".tmp.npz", path)
    return path


def load_scenes(folder):
    return [sf.read(p, dtype="float64")[0] for p in sorted(glob.glob(os.path.join(folder, "bed*.wav")))]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--earshot", default=".build/release/earshot")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--split", choices=["train", "dev"], default="train")
    parser.add_argument("--out", default=None, help="default: training/data/real-SPLIT")
    parser.add_argument("--clips", type=int, default=6000)
    parser.add_argument("--shard", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--alert-share", type=float, default=0.5, help="share of clips with an alert")
    parser.add_argument("--seed", type=int, default=None, help="first clip seed (default: the split's)")
    parser.add_argument("--classes", default=",".join(ra.ALERTS), help="the alert classes drawn")
    parser.add_argument("--street-sirens", type=float, default=0.0,
                        help="training only: share of sirens that are street sirens (half as many clips get traffic)")
    parser.add_argument("--snr", default="-10,20", help="LOW,HIGH: the range in dB the alerts are mixed at")
    parser.add_argument("--codec", type=float, default=0.0,
                        help="training only: share of clips heard through a lossy codec (MP3 or Vorbis)")
    parser.add_argument("--real-music", type=float, default=0.0,
                        help="share of clips whose background is real music of the split (package_music.py), alone or under speech")
    parser.add_argument("--soundtracks", choices=[k for k in package_music.SOUNDTRACKS if "-" in k],
                        help="draw real music from more of the split's soundtracks than its own (package_music.py): "
                             "train-wide or train-widest for training, dev-wide for development")
    parser.add_argument("--package-alerts", type=float, default=0.0,
                        help="training only: share of sirens, car horns and doorbells drawn from real recordings in "
                             "Debian's packages (package_alerts.py)")
    parser.add_argument("--tonal-music", type=float, default=0.0,
                        help="share of clips whose background is tonal music (tonal_music.py, the split's seeds), alone or under speech")
    parser.add_argument("--urban", type=float, default=0.0,
                        help="share of clips whose background is UrbanSound8K's street music or urban sound, and of sirens and "
                             "car horns that are its street recordings (the split's recordings; non-commercial data)")
    parser.add_argument("--synth", default=None, help="synthetic alerts and beds (default: OUT/synth)")
    args = parser.parse_args()
    classes = args.classes.split(",")
    if not set(classes) <= set(ra.ALERTS):
        parser.error(f"--classes {args.classes}: give alert classes from {','.join(ra.ALERTS)}")
    if not 0 <= args.street_sirens <= 1:  # also refuses NaN
        parser.error(f"--street-sirens {args.street_sirens}: give a share from 0 to 1")
    if not 0 <= args.codec <= 1:
        parser.error(f"--codec {args.codec}: give a share from 0 to 1")
    if not 0 <= args.real_music <= 1:
        parser.error(f"--real-music {args.real_music}: give a share from 0 to 1")
    if not 0 <= args.package_alerts <= 1:
        parser.error(f"--package-alerts {args.package_alerts}: give a share from 0 to 1")
    if args.soundtracks and not args.soundtracks.startswith(args.split + "-"):
        parser.error(f"--soundtracks {args.soundtracks}: not the {args.split} split's music")
    if not 0 <= args.tonal_music <= 1:
        parser.error(f"--tonal-music {args.tonal_music}: give a share from 0 to 1")
    if not 0 <= args.urban <= 1:
        parser.error(f"--urban {args.urban}: give a share from 0 to 1")
    if args.urban > 0 and not ra.UrbanBank(args.data, args.split):
        parser.error(f"--urban: no UrbanSound8K recordings of the {args.split} split under {args.data}")
    if args.split != "train" and args.package_alerts > 0:
        parser.error("--package-alerts is for the training split only")
    try:
        snr = tuple(float(v) for v in args.snr.split(","))
    except ValueError:
        snr = ()
    if len(snr) != 2 or not -40 <= snr[0] <= snr[1] <= 40:  # also refuses NaN
        parser.error(f"--snr {args.snr}: give LOW,HIGH in dB, LOW <= HIGH, within -40...40")
    args.out = args.out or f"training/data/real-{args.split}"
    synth = args.synth or os.path.join(args.out, "synth")
    os.makedirs(synth, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    if args.urban > 0:  # the condition travels with the clips to the weights (train.py)
        with open(os.path.join(args.out, "NONCOMMERCIAL"), "w") as f:
            f.write("These clips draw on UrbanSound8K (CC BY-NC 3.0): weights trained on them are for non-commercial use only.\n")
    print("synthesising alerts…", file=sys.stderr)
    ra.synthetic_alerts(args.earshot, synth, args.split, PER_CLASS, jobs=args.jobs)
    # Alert-free beds from the scene generator: traffic-like, machinery and its own music-like sounds.
    for i in range(8):
        path = os.path.join(synth, f"bed{i}.wav")
        if not os.path.exists(path):
            base, rooms = SCENE_SEEDS[args.split]
            subprocess.run([args.earshot, "synth", "scene", "--seed", str(base + i), "--duration", "60",
                            "--alerts-per-minute", "0", "--rooms", rooms, "--data", args.data,
                            "-o", path + ".tmp.wav", "--labels", path + ".json"], check=True, stderr=subprocess.DEVNULL)
            os.replace(path + ".tmp.wav", path)
    first = CLIP_SEEDS[args.split] if args.seed is None else args.seed
    augment = args.split == "train"  # the development clips stay as they were: the yardstick
    street = args.street_sirens if augment else 0.0
    codec = args.codec if augment else 0.0
    soundtracks = args.soundtracks or args.split
    if args.real_music > 0:
        print("fetching real music…", file=sys.stderr)
        package_music.tracks(soundtracks)  # once, before the workers share it
    if args.package_alerts > 0:
        print("fetching real alert recordings…", file=sys.stderr)
        package_alerts.bank()
    shards = [(i, args.shard, first + i, args.out, args.alert_share, augment, classes, street, snr, codec, args.real_music,
               args.package_alerts, args.tonal_music, args.urban, args.split) for i in range(args.clips // args.shard)]
    with multiprocessing.Pool(args.jobs, load_sources,
                              (args.data, synth, args.split, args.real_music, soundtracks, args.package_alerts, args.urban)) as pool:
        for k, path in enumerate(pool.imap_unordered(worker, shards)):
            print(f"\r{k + 1}/{len(shards)} shards", end="", file=sys.stderr)
    print(file=sys.stderr)


if __name__ == "__main__":
    main()

"""Real music from Debian's free game soundtracks, disjoint between training, development and
evaluation: by package, and within the one package shared by training and development, by track.

`../shared/data` holds no music, and the synthetic music-like beds are far easier than real
music: real soundtracks (sustained synth pads, brass, bells, sweeps) drew about ninety false
alarms an hour from a detector that drew none in the synthetic ones.
  * training: Planet Blupi's soundtrack (2.7 h), and 70 % of Battle for Wesnoth's tracks; the
    wider training set (`train-wide`) adds Warzone 2100's (30 tracks: electronic, ambient,
    orchestral) and Advanced Strategic Command's (3), and the widest (`train-widest`) adds UFO: Alien
    Invasion's (64 tracks: orchestral, ambient, sustained pads) and Nexuiz's (18: electronic,
    metal), both shipped as game archives (.pk3, zip files);
  * development (choosing the operating point): HyperRogue's soundtrack (23 min), and the other
    30 % of Wesnoth's; the wider development set (`dev-wide`) adds Hedgewars' (26 tracks:
    orchestral, rock, ethnic), FreedroidRPG's (16: ambient, electronic), Flare's (12: orchestral
    fantasy) and OpenClonk's (8), so the hour's budget counts more kinds of music than one
    soundtrack and a half;
  * evaluation (eval/detect, never trained on or tuned with): Endgame: Singularity's soundtrack
    (64 min, electronic) and Drascula's (47 min).
"""
import glob
import os
import shutil
import zipfile

import numpy as np
import soundfile as sf
import soxr

from training import debian_packages
from training import realaudio as ra

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "music")
WESNOTH = ("wesnoth-1.16-music", "usr/share/games/wesnoth/1.16/data/core/music")
SOUNDTRACKS = {
    "train": [("planetblupi-music-ogg", "usr/share/planetblupi/music"), WESNOTH],
    "train-wide": [("planetblupi-music-ogg", "usr/share/planetblupi/music"), WESNOTH,
                   ("warzone2100-music", "usr/share/games/warzone2100/music"), ("asc-music", "usr/share/games/asc/music")],
    "dev": [("hyperrogue-music", "usr/share/hyperrogue/music"), WESNOTH],
    "dev-wide": [("hyperrogue-music", "usr/share/hyperrogue/music"), WESNOTH,
                 ("hedgewars-data", "usr/share/games/hedgewars/Data/Music"),
                 ("freedroidrpg-data", "usr/share/freedroidrpg/data/sound/music"),
                 ("flare-game", "usr/share/games/flare/mods/fantasycore/music"),
                 ("openclonk-data", "usr/share/games/openclonk/Music.ocg")],
    "eval": [("singularity-music", "usr/share/games/singularity/music"),
             ("drascula-music", "usr/share/scummvm/drascula/audio")],
}
SOUNDTRACKS["train-widest"] = SOUNDTRACKS["train-wide"] + [("ufoai-music", "usr/share/games/ufoai/base/0music.pk3"),
                                                          ("nexuiz-music", "usr/share/games/nexuiz/data/music.pk3")]
LONGEST = 300  # seconds kept of a track: some loop for half an hour


def tracks(split, folder=FOLDER):
    """The split's music files, fetched once (a clear one-line error where apt cannot)."""
    paths = []
    for package, inside in SOUNDTRACKS[split]:
        root = debian_packages.extract(package, inside, folder)
        if root.endswith(".pk3"):
            root = unpacked(root)
        found = sorted(p for kind in ("ogg", "opus", "mp3") for p in glob.glob(os.path.join(root, "**", "*." + kind), recursive=True))
        if (package, inside) == WESNOTH and split != "eval":
            found = [p for p in found if ra.is_dev("music " + os.path.basename(p)) == split.startswith("dev")]
        paths += found
    return paths


def unpacked(archive):
    """A game archive's music, unpacked once into a folder beside it (whole or not at all)."""
    folder = archive[:-len(".pk3")]
    if os.path.isdir(folder):
        return folder
    part = folder + ".part"
    if os.path.isdir(part):  # left by a killed run
        shutil.rmtree(part)
    try:
        with zipfile.ZipFile(archive) as z:
            z.extractall(part, [m for m in z.namelist() if m.lower().endswith((".ogg", ".opus", ".mp3"))])
    except (zipfile.BadZipFile, OSError) as error:
        raise SystemExit(f"cannot unpack {archive}: {error}") from None
    os.replace(part, folder)
    return folder


def load(path, longest=LONGEST):
    """A track as 16 kHz mono float32, at most `longest` seconds, its silent lead-in and tail cut."""
    with sf.SoundFile(path) as f:
        x = f.read(min(f.frames, int(longest * f.samplerate)), dtype="float32", always_2d=True).mean(axis=1)
        rate = f.samplerate
    x = soxr.resample(x, rate, ra.RATE) if rate != ra.RATE else x
    return ra.trim(x.astype(np.float64), within_db=50).astype(np.float32)


def bank(split, folder=FOLDER):
    """Every track of the split, in memory; those under a second long are left out."""
    return [x for x in (load(p) for p in tracks(split, folder)) if len(x) >= ra.RATE]

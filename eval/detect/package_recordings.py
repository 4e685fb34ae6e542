"""Real siren recordings from outside ../shared/data, fetched from Debian's free game packages.

Four real recordings of emergency vehicles, never used in training or in choosing an operating
point. `fetch` gets each once with `apt-get download` (nothing is installed) into
eval/data/detect/package_sirens. Both `evaluate.py` (R5, through `earshot detect`) and
`package_sirens.py` (several weights through the Python tracker) place each PLACEMENTS times in
real development audio, cycling through SNRS.
"""
import os

from training import debian_packages

HERE = os.path.dirname(os.path.abspath(__file__))

FOLDER = os.path.join(HERE, "..", "data", "detect", "package_sirens")
# (name, Debian package, path inside it): each a real recording of a vehicle's siren.
RECORDINGS = [
    ("fire engine, mechanical wail (10.3 s)", "tuxpaint-stamps-default", "usr/share/tuxpaint/stamps/vehicles/emergency/firetruck.ogg"),
    ("fire engine (5.5 s, 11 kHz)", "scorched3d-data", "usr/share/games/scorched3d/data/globalmods/apoc/data/wav/misc/firetruck.wav"),
    ("police car (4.5 s, 11 kHz)", "scorched3d-data", "usr/share/games/scorched3d/data/globalmods/apoc/data/wav/misc/policecar.wav"),
    ("siren running down (2.3 s)", "micropolis-data", "usr/share/games/micropolis/res/sounds/siren.wav"),
]
SNRS = [-5, 0, 5, 10]
PLACEMENTS = 40  # per recording: 10 beds at each SNR, the SNR cycling fastest


def fetch():
    """Each recording as a file under FOLDER, fetched once; a clear one-line error where apt cannot."""
    return [debian_packages.extract(package, inside, FOLDER) for _, package, inside in RECORDINGS]

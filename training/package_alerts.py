"""Real alert recordings for training from Debian's free packages, fetched with `apt-get download`
(nothing is installed).

`../shared/data` holds five one-second real siren clips, so siren training rests on synthesis;
these add the real ones Debian's packages hold: a mechanical air-raid siren spinning up
(5.5 s), three car horns, three doorbells. (A second horn in sumo-tools is mostly engine, a
honk in moon-lander-data 0.2 s long: neither is used.) None comes from a package that evaluation
draws on (eval/detect/package_recordings.py: tuxpaint-stamps-default, scorched3d-data,
micropolis-data), so the package sirens of `make eval-detect` stay unheard.
"""
import os

from training import debian_packages
from training import realaudio as ra

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "package_alerts")
TRIPLEA = "usr/share/games/triplea/assets/sounds/generic"
# class: [(Debian package, path inside it)]
RECORDINGS = {
    "siren": [
        ("triplea", f"{TRIPLEA}/game_start/game_start_01_air_raid_alarm.mp3"),  # (the package holds it twice)
    ],
    "car_horn": [
        ("sumo-tools", "usr/share/sumo/tools/game/sounds/car_horn1.wav"),
        ("sumo-tools", "usr/share/sumo/tools/game/sounds/car_horn3.wav"),
        ("trophy-data", "usr/share/games/trophy/sounds/carhorn.wav"),
    ],
    "doorbell": [
        ("minetest-mod-homedecor", "usr/share/games/minetest/mods/homedecor/homedecor_electrical/sounds/homedecor_doorbell.ogg"),
        ("minetest-mod-unified-inventory", "usr/share/games/minetest/mods/unified_inventory/sounds/dingdong.ogg"),
        ("triplea", f"{TRIPLEA}/chat_join_game/chat_join_game_01_door_bell.mp3"),
    ],
}


def bank(folder=FOLDER):
    """Per class the recordings as 16 kHz mono, their silent lead-in and tail cut; fetched once
    (a clear one-line error where apt cannot)."""
    return {klass: [ra.trim(ra.load(debian_packages.extract(package, inside, folder))) for package, inside in found]
            for klass, found in RECORDINGS.items()}

"""NAL-R gains as pyclarity computes them (clarity.enhancer.nalr.NALR.build), for the prescription tests.

For each audiogram (the Bisgaard standard audiograms and a profound loss, whose 500/1000/2000 Hz sum
is over 180 dB), the insertion gains pyclarity's NAL-R designs its FIR from, at its six frequencies.
The gains are read where pyclarity hands them to its interpolator, so no FIR design error enters.

    .venv/bin/python Tests/EarshotHearingAidTests/Fixtures/make_fixtures.py
"""
import json
import os

import numpy as np
import scipy.interpolate
from clarity.enhancer import nalr as nalr_module
from clarity.utils.audiogram import Audiogram

from eval.amplify.bisgaard import AUDIOGRAMS as BISGAARD, FREQUENCIES

AUDIOGRAMS = {
    **BISGAARD,
    "profound": [70, 75, 80, 85, 90, 95, 100, 105, 110, 110],
}

captured = {}
real_interp1d = scipy.interpolate.interp1d


def capture(x, y, *args, **kwargs):
    captured["gains"] = [float(g) for g in y[1:-1]]  # pyclarity pads both ends
    return real_interp1d(x, y, *args, **kwargs)


nalr_module.scipy.interpolate.interp1d = capture
fixture = {"frequencies": [250, 500, 1000, 2000, 4000, 6000], "audiogramFrequencies": FREQUENCIES, "listeners": {}}
for name, levels in AUDIOGRAMS.items():
    nalr_module.NALR(nfir=220, sample_rate=16000).build(
        Audiogram(levels=np.array(levels, dtype=float), frequencies=np.array(FREQUENCIES, dtype=float)))
    fixture["listeners"][name] = {"levels": levels, "gains": captured["gains"]}
path = os.path.join(os.path.dirname(__file__), "nalr_pyclarity.json")
with open(path, "w") as f:
    json.dump(fixture, f, indent=1)
print(f"wrote {path}")

"""The standard audiograms of Bisgaard, Vlaming & Dahlquist (2010): dB HL at FREQUENCIES.

N1–N4 are flat and moderately sloping losses of rising degree, S1–S3 steep high-frequency ones;
shared by the evaluation (evaluate.py) and the NAL-R fixture of the prescription tests.
"""
FREQUENCIES = [250, 375, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000]
AUDIOGRAMS = {
    "N1": [10, 10, 10, 10, 10, 10, 15, 20, 30, 40],
    "N2": [20, 20, 20, 22.5, 25, 30, 35, 40, 45, 50],
    "N3": [35, 35, 35, 35, 40, 45, 50, 55, 60, 65],
    "N4": [55, 55, 55, 55, 55, 60, 65, 70, 75, 80],
    "S1": [10, 10, 10, 10, 10, 10, 15, 30, 55, 70],
    "S2": [20, 20, 20, 22.5, 25, 35, 55, 75, 95, 95],
    "S3": [30, 30, 35, 47.5, 60, 70, 75, 80, 80, 85],
}

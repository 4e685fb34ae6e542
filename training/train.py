"""Train the alert detector and export it for Earshot.

Reads the scenes written by make_dataset.py, trains a small CNN on 1 s windows of log-mel and
tonality features (features.py), folds batch normalisation into the convolutions, and writes
  Sources/EarshotAlerts/Resources/AlertDetector.safetensors   (weights, float32)
  Tests/EarshotAlertsTests/Fixtures/detector_parity.json       (inputs and outputs for Swift)
"""
import argparse
import glob
import json
import os
import time

import numpy as np
import soundfile as sf
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

import features as feat

IGNORE = -100
CHANNELS = [2, 16, 32, 48, 64]
POOLED = 3  # the first three convolutions are followed by 2x2 max pooling


class AlertNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 3, padding=1) for a, b in zip(CHANNELS, CHANNELS[1:]))
        self.norms = nn.ModuleList(nn.BatchNorm2d(b) for b in CHANNELS[1:])
        self.head = nn.Linear(2 * CHANNELS[-1], len(feat.CLASSES))

    def forward(self, x):  # (batch, 2, WINDOW, MELS) -> logits
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            x = F.relu(norm(conv(x)))
            if i < POOLED:
                x = F.max_pool2d(x, 2)
        return self.head(torch.cat([x.amax(dim=(2, 3)), x.mean(dim=(2, 3))], dim=1))


class Folded(nn.Module):
    """The exported network: batch norm folded into each convolution, as Swift runs it."""
    def __init__(self, tensors):
        super().__init__()
        self.t = tensors

    def forward(self, x):
        for i in range(len(CHANNELS) - 1):
            x = F.relu(F.conv2d(x, self.t[f"conv{i}.weight"], self.t[f"conv{i}.bias"], padding=1))
            if i < POOLED:
                x = F.max_pool2d(x, 2)
        x = torch.cat([x.amax(dim=(2, 3)), x.mean(dim=(2, 3))], dim=1)
        return F.linear(x, self.t["head.weight"], self.t["head.bias"])


def fold(model):
    tensors = {}
    for i, (conv, norm) in enumerate(zip(model.convs, model.norms)):
        scale = norm.weight / torch.sqrt(norm.running_var + norm.eps)
        tensors[f"conv{i}.weight"] = (conv.weight * scale[:, None, None, None]).detach().contiguous()
        tensors[f"conv{i}.bias"] = ((conv.bias - norm.running_mean) * scale + norm.bias).detach().contiguous()
    tensors["head.weight"] = model.head.weight.detach().contiguous()
    tensors["head.bias"] = model.head.bias.detach().contiguous()
    return tensors


def frame_targets(stem, frame_count):
    """Per frame: class index where the alert is sounding, IGNORE inside a label's span where it
    is not (a pause in a temporal pattern, a fading tail), 0 elsewhere."""
    labels = json.load(open(stem + ".json"))
    alerts, _ = sf.read(stem + ".alerts.wav", dtype="float64")
    hop, frame = feat.HOP, feat.FRAME
    squares = np.concatenate([[0], np.cumsum(feat.padded(alerts) ** 2)])
    starts = np.arange(frame_count) * hop
    energy = squares[np.minimum(starts + frame, len(squares) - 1)] - squares[starts]
    targets = np.zeros(frame_count, np.int64)
    ends = (np.arange(frame_count) + 1) * hop / feat.SAMPLE_RATE  # when each frame is complete
    for label in labels:
        inside = (ends >= label["start"]) & (ends <= label["end"] + 0.1)
        if not inside.any():
            continue
        loud = energy >= energy[inside].max() * 1e-3
        targets[inside] = IGNORE
        targets[inside & loud] = feat.CLASSES.index(label["class"])
    return targets


def window_targets(frames_target, ends):
    """A window is its alert's class when the alert sounds in at least a fifth of its newest
    0.5 s; background when nothing sounds or is labelled anywhere in it; otherwise ignored."""
    out = np.empty(len(ends), np.int64)
    half = feat.WINDOW // 2
    for j, end in enumerate(ends):
        recent = frames_target[end - half + 1:end + 1]
        whole = frames_target[end - feat.WINDOW + 1:end + 1]
        positive = recent[recent > 0]
        if len(positive) >= 0.2 * half:
            out[j] = np.bincount(positive).argmax()
        elif np.all(whole == 0):
            out[j] = 0
        else:
            out[j] = IGNORE
    return out


def load_split(folder, stride):
    frames, targets, index = [], [], []
    for k, stem in enumerate(sorted(p[:-5] for p in glob.glob(os.path.join(folder, "*.json")))):
        cache = stem + ".features.npy"
        if os.path.exists(cache):
            f = np.load(cache)
        else:
            x, rate = sf.read(stem + ".wav", dtype="float64")
            assert rate == feat.SAMPLE_RATE
            f = feat.frame_features(x)
            np.save(cache, f)
        ends = np.arange(feat.WINDOW - 1, len(f), stride)
        t = window_targets(frame_targets(stem, len(f)), ends)
        keep = t != IGNORE
        frames.append(f)
        targets.append(t[keep])
        index.append(np.stack([np.full(keep.sum(), k), ends[keep]], axis=1))
    return frames, np.concatenate(targets), np.concatenate(index)


def batch_inputs(frames, index):
    out = np.empty((len(index), 2, feat.WINDOW, feat.MELS), np.float32)
    for j, (k, end) in enumerate(index):
        out[j] = feat.window_input(frames[k], end)
    return torch.from_numpy(out)


def parity_signal(sample_count):
    """A signal both sides compute exactly: a 3.1 kHz tone keyed in a temporal-three pattern, a
    wailing 600-1400 Hz tone, and integer-hash noise."""
    n = np.arange(sample_count, dtype=np.int64)
    t = n / feat.SAMPLE_RATE
    noise = ((n * 1103515245 + 12345) % 2147483648) / 2147483648.0 - 0.5
    keyed = ((t % 4.0) < 2.5) & ((t % 1.0) < 0.5)
    phase = 2 * np.pi * (1000 * t - 400 / (2 * np.pi * 0.25) * np.cos(2 * np.pi * 0.25 * t))
    return 0.3 * np.sin(2 * np.pi * 3100 * t) * keyed + 0.1 * np.sin(phase) * (t > 1.5) + 0.05 * noise


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="training/data")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--stride", type=int, default=10, help="frames between training windows")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--weights", default="Sources/EarshotAlerts/Resources/AlertDetector.safetensors")
    parser.add_argument("--parity", default="Tests/EarshotAlertsTests/Fixtures/detector_parity.json")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    train_frames, train_y, train_index = load_split(os.path.join(args.data, "train"), args.stride)
    valid_frames, valid_y, valid_index = load_split(os.path.join(args.data, "valid"), feat.STRIDE * 2)
    counts = np.bincount(train_y, minlength=len(feat.CLASSES))
    print("training windows per class:", dict(zip(feat.CLASSES, counts.tolist())))
    weights = torch.tensor((counts.sum() / np.maximum(counts, 1) / len(counts)) ** 0.5, dtype=torch.float32)

    model = AlertNet()
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-3)
    batch = 128
    steps = args.epochs * (len(train_y) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=3e-3, total_steps=steps)
    for epoch in range(args.epochs):
        model.train()
        order = rng.permutation(len(train_y))
        started, total = time.time(), 0.0
        for b in range(len(train_y) // batch):
            pick = order[b * batch:(b + 1) * batch]
            x = batch_inputs(train_frames, train_index[pick])
            # Frequency masking: no single band may decide.
            for j in range(len(x)):
                if rng.random() < 0.5:
                    f0 = rng.integers(0, feat.MELS - 8)
                    x[j, :, :, f0:f0 + rng.integers(1, 8)] = 0
            loss = F.cross_entropy(model(x), torch.from_numpy(train_y[pick]), weight=weights)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        model.eval()
        with torch.no_grad():
            predicted = np.concatenate([model(batch_inputs(valid_frames, valid_index[i:i + 512])).argmax(1).numpy()
                                        for i in range(0, len(valid_y), 512)])
        recall = {c: float(np.mean(predicted[valid_y == k] == k)) for k, c in enumerate(feat.CLASSES) if np.any(valid_y == k)}
        false_positive = float(np.mean(predicted[valid_y == 0] != 0))
        print(f"epoch {epoch + 1}: loss {total / (len(train_y) // batch):.4f}, validation recall "
              + ", ".join(f"{c} {r:.3f}" for c, r in recall.items())
              + f", background windows called alerts {false_positive:.4f} ({time.time() - started:.0f} s)", flush=True)

    model.eval()
    tensors = fold(model)
    os.makedirs(os.path.dirname(args.weights), exist_ok=True)
    save_file(tensors, args.weights, metadata={
        "classes": ",".join(feat.CLASSES), "sample_rate": str(feat.SAMPLE_RATE), "frame": str(feat.FRAME),
        "hop": str(feat.HOP), "mels": str(feat.MELS), "fmin": str(feat.FMIN), "fmax": str(feat.FMAX),
        "window": str(feat.WINDOW), "stride": str(feat.STRIDE)})

    # Parity: features of an exactly computable signal, and the exported network's outputs.
    signal = parity_signal(int(2.6 * feat.SAMPLE_RATE))
    frames = feat.frame_features(signal)
    ends = list(range(feat.WINDOW - 1, len(frames), 15))
    inputs = torch.stack([torch.from_numpy(feat.window_input(frames, e)) for e in ends])
    with torch.no_grad():
        folded = F.softmax(Folded(tensors)(inputs), dim=1)
        trained = F.softmax(model(inputs), dim=1)
    assert torch.max(torch.abs(folded - trained)) < 1e-5, "folding changed the network"
    os.makedirs(os.path.dirname(args.parity), exist_ok=True)
    json.dump({"generator": "training/train.py", "sampleCount": len(signal),
               "frames": [[round(float(v), 6) for v in frames[t].ravel()] for t in (0, 40, 77, 125)],
               "frameIndices": [0, 40, 77, 125],
               "windowEnds": ends,
               "probabilities": [[float(v) for v in row] for row in folded.numpy()]},
              open(args.parity, "w"))
    print(f"wrote {args.weights} and {args.parity}")


if __name__ == "__main__":
    main()

"""Reference values for the image statistics the learned gate target reads (issue 31;
src-main/core/deploy/image-statistics-graph.ts), computed by the function that trained the shipped
model, `image_statistics` in tools/train/train_knob.py (torch). Run with Debian's interpreter and
python3-torch installed:

    /usr/bin/python3 tools/reference/image_statistics_torch.py > tests/fixtures/reference/heads/image-statistics.json

The images are generated here (seeded 8-bit pixels b, including flat, dark, saturated, noisy and
smooth ones) and written with the outputs. The script's function reads its normalised input back to
pixels with its MEAN and STD; here they are set to 0 and 1 and it is given the pixels p = b / 255
directly, so what the tests check is the graph's own undoing of each input spec's normalisation.
"""
import importlib.util
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('train_knob', os.path.join(HERE, '..', 'train', 'train_knob.py'))
train_knob = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train_knob)
train_knob.MEAN, train_knob.STD = 0.0, 1.0

rng = np.random.default_rng(20261206)


def images(channels, height, width):
    """Five images [5, C, H, W] of 8-bit pixels: uniform noise, dark with bright specks, a smooth ramp, flat grey, saturated."""
    noise = rng.integers(0, 256, size=(channels, height, width))
    dark = np.where(rng.random((channels, height, width)) < 0.1, 255, rng.integers(0, 12, size=(channels, height, width)))
    ramp = np.broadcast_to(np.linspace(0, 255, width).round(), (channels, height, width))
    flat = np.full((channels, height, width), 128)
    saturated = np.where(rng.random((channels, height, width)) < 0.7, 250, rng.integers(0, 256, size=(channels, height, width)))
    return np.stack([noise, dark, ramp, flat, saturated]).astype(np.uint8)


cases = []
for name, channels, height, width, layout, value_range, mean, std in [
    ('Fashion-MNIST-like: one channel, [0, 1], one mean and deviation', 1, 12, 10, 'NCHW', [0, 1], [0.286], [0.353]),
    ('ImageNet-like: three channels, [0, 1], per-channel mean and deviation', 3, 9, 11, 'NCHW', [0, 1], [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
    ('channels last, [0, 255] with per-channel mean and deviation', 3, 7, 8, 'NHWC', [0, 255], [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]),
]:
    b = images(channels, height, width)
    p = torch.from_numpy(b.astype(np.float64) / 255.0).float()
    statistics = train_knob.image_statistics(p).double().numpy()
    cases.append(
        {
            'name': name,
            'spec': {'name': 'image', 'layout': layout, 'width': width, 'height': height, 'channels': channels,
                     'value_range': value_range, 'mean': mean, 'std': std},
            # [N, C, H, W] 8-bit pixels, whatever the layout the spec gives the model
            'pixels': b.reshape(-1).tolist(),
            'count': int(b.shape[0]),
            'statistics': statistics.tolist(),
        }
    )

json.dump(
    {
        'provenance': 'tools/reference/image_statistics_torch.py: tools/train/train_knob.py image_statistics (torch '
        + torch.__version__ + ', float32) on seeded 8-bit images',
        'order': ['mean', 'std (n - 1)', 'mean |Laplacian|', 'rms Laplacian', 'total variation', 'fraction < 0.05', 'fraction > 0.95'],
        'cases': cases,
    },
    sys.stdout,
)
sys.stdout.write('\n')

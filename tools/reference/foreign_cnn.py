"""A foreign single classifier for the tests of issue 31 ("any classifier becomes a Knob model"): a
small CNN trained on Fashion-MNIST the ordinary way (no Knob heads, no corruptions) and exported by
PyTorch with one output named `logits`, as a user's model arrives. Run with Debian's interpreter,
python3-torch, python3-onnx and dataset-fashion-mnist installed:

    /usr/bin/python3 tools/reference/foreign_cnn.py tests/fixtures/models/foreign-cnn.onnx

Deterministic on one thread from its seed: conv 8 -> pool -> conv 16 -> pool -> fc 64 (ReLU) -> fc 10,
two epochs of Adam (lr 1e-3, batch 128) on the 60,000 training images scaled to [0, 1]; the
normalisation is inside the network, so its input is [N, 1, 28, 28] in [0, 1]. Its metadata carries
the labels and input spec the app reads (knob.labels, knob.input), not the Knob contract.
"""
import gzip
import json
import sys

import numpy as np
import onnx
import torch
from torch import nn

DATA = '/usr/share/datasets/fashion-mnist'
LABELS = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot']
SEED = 20261205


def read_idx(path):
    with gzip.open(path, 'rb') as f:
        data = f.read()
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], 'big') for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


class ForeignCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, image):
        x = (image - 0.286) / 0.353
        x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def main():
    out = sys.argv[1]
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    images = torch.from_numpy(read_idx(f'{DATA}/train-images-idx3-ubyte.gz').astype(np.float32) / 255).unsqueeze(1)
    labels = torch.from_numpy(read_idx(f'{DATA}/train-labels-idx1-ubyte.gz').astype(np.int64))
    net = ForeignCnn()
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(SEED)
    for epoch in range(2):
        order = torch.randperm(len(labels), generator=generator)
        for start in range(0, len(labels), 128):
            batch = order[start:start + 128]
            optimiser.zero_grad()
            loss = nn.functional.cross_entropy(net(images[batch]), labels[batch])
            loss.backward()
            optimiser.step()
    net.eval()
    test_images = torch.from_numpy(read_idx(f'{DATA}/t10k-images-idx3-ubyte.gz').astype(np.float32) / 255).unsqueeze(1)
    test_labels = torch.from_numpy(read_idx(f'{DATA}/t10k-labels-idx1-ubyte.gz').astype(np.int64))
    with torch.no_grad():
        accuracy = (net(test_images).argmax(1) == test_labels).float().mean().item()
    torch.onnx.export(
        net, torch.zeros(1, 1, 28, 28), out, input_names=['image'], output_names=['logits'],
        dynamic_axes={'image': {0: 'N'}, 'logits': {0: 'N'}}, opset_version=17,
    )
    model = onnx.load(out)
    for key, value in {
        'knob.labels': json.dumps(LABELS),
        'knob.input': json.dumps({'name': 'image', 'layout': 'NCHW', 'width': 28, 'height': 28, 'channels': 1,
                                  'value_range': [0, 1], 'mean': [0], 'std': [1]}),
        'foreign_cnn.training': json.dumps({'script': 'tools/reference/foreign_cnn.py', 'seed': SEED, 'epochs': 2,
                                            'torch': torch.__version__, 'test_accuracy': round(accuracy, 4)}),
    }.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, out)
    print(f'{out}: test accuracy {accuracy:.4f}', file=sys.stderr)


main()

import { resourcePath } from '../files/resource-path';

/** The embedded default stream: the Fashion-MNIST test set shipped in resources/data. */
export const FASHION_MNIST_LABELS = [
  'T-shirt/top',
  'Trouser',
  'Pullover',
  'Dress',
  'Coat',
  'Sandal',
  'Shirt',
  'Sneaker',
  'Bag',
  'Ankle boot',
];

export const EMBEDDED_IMAGES_PATH = resourcePath('data', 't10k-images-idx3-ubyte.gz');
export const EMBEDDED_LABELS_PATH = resourcePath('data', 't10k-labels-idx1-ubyte.gz');

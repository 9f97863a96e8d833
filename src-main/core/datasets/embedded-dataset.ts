import { fileURLToPath } from 'node:url';

/** The embedded default stream: the Fashion-MNIST test set shipped in resources/data. */
export const FASHION_MNIST_LABELS = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];

export const EMBEDDED_IMAGES_PATH = fileURLToPath(new URL('../../../resources/data/t10k-images-idx3-ubyte.gz', import.meta.url));
export const EMBEDDED_LABELS_PATH = fileURLToPath(new URL('../../../resources/data/t10k-labels-idx1-ubyte.gz', import.meta.url));

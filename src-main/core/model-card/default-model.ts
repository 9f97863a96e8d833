import { resourcePath } from '../files/resource-path';

/** The shipped default model (trained by tools/train) and how its card is generated. */
export const DEFAULT_MODEL_PATH = resourcePath('models', 'knob-fmnist.onnx');
export const DEFAULT_MODEL_CARD_JSON = resourcePath('models', 'knob-fmnist.card.json');
export const MODEL_CARD_IMAGES_PER_CONDITION = 1000;

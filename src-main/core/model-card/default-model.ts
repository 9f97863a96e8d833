import { fileURLToPath } from 'node:url';

/** The shipped default model (trained by tools/train) and how its card is generated. */
export const DEFAULT_MODEL_PATH = fileURLToPath(new URL('../../../resources/models/knob-fmnist.onnx', import.meta.url));
export const DEFAULT_MODEL_CARD_JSON = fileURLToPath(new URL('../../../resources/models/knob-fmnist.card.json', import.meta.url));
export const MODEL_CARD_IMAGES_PER_CONDITION = 1000;

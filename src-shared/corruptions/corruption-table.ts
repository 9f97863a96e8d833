/**
 * Fashion-MNIST-C style corruptions: the one table of parameters per severity (1..5).
 *
 * They follow Hendrycks & Dietterich's ImageNet-C / CIFAR-10-C definitions. Noise strengths are
 * ImageNet-C's (Fashion-MNIST's plain backgrounds make CIFAR-C's mild noise nearly harmless); every
 * length (blur sigma, disk radius, motion length, elastic displacement) is given in pixels of a
 * 28 x 28 image and scaled by min(width, height) / 28 for other sizes.
 */
export const NOISE_CORRUPTIONS = ['gaussian_noise', 'shot_noise', 'impulse_noise', 'speckle_noise'] as const;
export const BLUR_CORRUPTIONS = ['gaussian_blur', 'defocus_blur', 'motion_blur', 'zoom_blur'] as const;
export const CORRUPTION_NAMES = [
  ...NOISE_CORRUPTIONS,
  ...BLUR_CORRUPTIONS,
  'contrast',
  'brightness',
  'fog',
  'pixelate',
  'jpeg_compression',
  'elastic_transform',
  'saturate',
] as const;
export type CorruptionName = (typeof CORRUPTION_NAMES)[number];

/**
 * Corruptions that act on colour (ImageNet-C's saturate changes HSV saturation): a grayscale frame
 * has none, so they are not offered for grayscale inputs, and a schedule naming one is refused there.
 */
export const COLOUR_CORRUPTIONS: ReadonlySet<CorruptionName> = new Set(['saturate']);

/** The corruptions that apply to frames with this many channels. */
export function corruptionsFor(channels: 1 | 3): CorruptionName[] {
  return CORRUPTION_NAMES.filter((name) => channels === 3 || !COLOUR_CORRUPTIONS.has(name));
}

/** Why a corruption cannot be applied to frames with this many channels, or null when it can. */
export function corruptionUnavailable(name: CorruptionName, channels: 1 | 3): string | null {
  return channels === 1 && COLOUR_CORRUPTIONS.has(name)
    ? `${name} changes colour saturation; the model's input is grayscale, which has none`
    : null;
}

export const SEVERITIES = [1, 2, 3, 4, 5] as const;

export interface SeverityParameters {
  /** What the parameter is, with its unit. */
  parameter: string;
  values: readonly [number, number, number, number, number];
  /** Second parameter where there is one. */
  secondParameter?: string;
  secondValues?: readonly [number, number, number, number, number];
  source: string;
  rgbOnly?: boolean;
}

export const CORRUPTION_TABLE: Record<CorruptionName, SeverityParameters> = {
  gaussian_noise: {
    parameter: 'noise sd (of [0,1] intensity)',
    values: [0.08, 0.12, 0.18, 0.26, 0.38],
    source: 'ImageNet-C',
  },
  shot_noise: { parameter: 'photons per unit intensity (Poisson)', values: [60, 25, 12, 5, 3], source: 'ImageNet-C' },
  impulse_noise: {
    parameter: 'salt-and-pepper fraction',
    values: [0.03, 0.06, 0.09, 0.17, 0.27],
    source: 'ImageNet-C',
  },
  speckle_noise: { parameter: 'multiplicative noise sd', values: [0.15, 0.2, 0.35, 0.45, 0.6], source: 'ImageNet-C' },
  gaussian_blur: {
    parameter: 'sigma (px at 28 px)',
    values: [0.5, 0.8, 1.1, 1.5, 2.0],
    source: 'CIFAR-10-C [.4 .. 1] at 32 px, extended',
  },
  defocus_blur: {
    parameter: 'disk radius (px at 28 px)',
    values: [0.8, 1.2, 1.6, 2.1, 2.6],
    secondParameter: 'aliasing sigma (px)',
    secondValues: [0.3, 0.3, 0.4, 0.4, 0.5],
    source: 'ImageNet-C disk kernel, radii scaled',
  },
  motion_blur: {
    parameter: 'blur length (px at 28 px)',
    values: [3, 5, 7, 9, 11],
    secondParameter: 'Gaussian weighting sigma (px)',
    secondValues: [1, 1.5, 2, 2.5, 3],
    source: 'ImageNet-C (radius, sigma), angle uniform from the seed',
  },
  zoom_blur: {
    parameter: 'largest zoom factor (steps of 0.01 from 1)',
    values: [1.06, 1.11, 1.16, 1.21, 1.26],
    source: 'CIFAR-10-C',
  },
  contrast: {
    parameter: 'contrast factor around the mean',
    values: [0.5, 0.4, 0.3, 0.2, 0.1],
    source: 'ImageNet-C [.4 .. .05], milder start',
  },
  brightness: { parameter: 'added value (V of HSV)', values: [0.1, 0.2, 0.3, 0.4, 0.5], source: 'ImageNet-C' },
  fog: {
    parameter: 'fog strength',
    values: [0.2, 0.5, 0.75, 1, 1.5],
    secondParameter: 'plasma fractal roughness (wibble decay)',
    secondValues: [3, 3, 2.5, 2, 1.75],
    source: 'CIFAR-10-C plasma fractal',
  },
  pixelate: {
    parameter: 'downscale factor (box, then nearest up)',
    values: [0.9, 0.75, 0.6, 0.5, 0.4],
    source: 'CIFAR-10-C [.95 .. .65], stronger for 28 px',
  },
  jpeg_compression: { parameter: 'JPEG quality (jpeg-js encoder)', values: [25, 18, 15, 10, 7], source: 'ImageNet-C' },
  elastic_transform: {
    parameter: 'displacement amplitude (px at 28 px)',
    values: [1.5, 2, 2.5, 3, 3.5],
    secondParameter: 'displacement smoothness sigma (px)',
    secondValues: [3, 2.5, 2, 1.75, 1.5],
    source: 'Simard et al. elastic distortion as in ImageNet-C, sizes for 28 px',
  },
  saturate: {
    parameter: 'saturation factor (S of HSV)',
    values: [0.3, 0.1, 2, 5, 20],
    secondParameter: 'added saturation',
    secondValues: [0, 0, 0, 0.1, 0.2],
    source: 'ImageNet-C',
    rgbOnly: true,
  },
};

export function isCorruptionName(name: string): name is CorruptionName {
  return (CORRUPTION_NAMES as readonly string[]).includes(name);
}

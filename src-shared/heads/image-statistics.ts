/**
 * The cheap image statistics the learned gate target reads beside a backbone's features (issue 31;
 * tools/train/train_knob.py's `image_statistics`), in the order the graph that computes them gives
 * them (src-main/core/deploy/image-statistics-graph.ts), on pixels in [0, 1] over every channel.
 */
export const IMAGE_STATISTICS = [
  'mean',
  'standard deviation',
  'mean |Laplacian|',
  'root mean square Laplacian',
  'total variation',
  'fraction below 0.05',
  'fraction above 0.95',
] as const;

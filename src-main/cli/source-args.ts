import type { ModelDescription } from '../../src-shared/api/model-options';
import { readClassMapFile } from '../core/sources/class-map-file';
import type { FrameSource } from '../core/sources/frame-source';
import { modelLabelOptions, openSourcePath } from '../core/sources/open-source';
import type { Values } from './cli-args';

/**
 * --source and --class-map, the same for every command that reads a source: class names (folders,
 * a manifest's labels) are matched to the model's labels by name, or by the class map file given.
 */
export const SOURCE_OPTIONS = {
  source: { type: 'string' },
  'class-map': { type: 'string' },
} as const;

export const SOURCE_USAGE = `--source default|DATASET|FOLDER|VIDEO [--class-map FILE  (source name -> model label, one per line or JSON)]`;

export async function openSourceFromArgs(
  values: Values,
  model: ModelDescription,
  frameRateHz: number | undefined,
  progress?: { onProgress?: (done: number, total: number) => void; signal?: AbortSignal },
): Promise<FrameSource> {
  const classMap = typeof values['class-map'] === 'string' ? await readClassMapFile(values['class-map']) : null;
  return openSourcePath(String(values.source), {
    target: model.input,
    frameRateHz,
    ...modelLabelOptions(model, classMap),
    ...progress,
  });
}

import type { ModelDescription } from '../../src-shared/api/model-options';
import { describeClassMapping, type ClassMap } from '../../src-shared/labels/class-names';
import type { SourceInfo } from '../../src-shared/api/session-state';
import { describeSourceIdentity } from '../../src-shared/api/source-identity';
import type { Trace } from '../../src-shared/trace/trace';
import { readLabelFile, traceWithImportedLabels } from '../core/recording/label-import';
import type { StoredProvenance } from '../core/report/provenance';
import { readClassMapFile } from '../core/sources/class-map-file';
import type { FrameSource } from '../core/sources/frame-source';
import { detectSourceKind, modelLabelOptions, openSourcePath } from '../core/sources/open-source';
import type { Values } from './cli-args';

/**
 * --source, --label-file and --class-map, the same for every command that reads a source: class names
 * (folders, a manifest's labels, a label file's) are matched to the model's labels by name, or by
 * the class map file given.
 */
export const SOURCE_OPTIONS = {
  source: { type: 'string' },
  'class-map': { type: 'string' },
} as const;

/** --label-file FILE: labels for the frames the source left unlabelled (commands that record a trace). */
export const LABEL_OPTIONS = { 'label-file': { type: 'string' } } as const;

export const SOURCE_USAGE = `--source default|DATASET|FOLDER|VIDEO [--class-map FILE  (source name -> model label, one per line or JSON)]`;

/** The class map, read once: it maps a folder source's names and a --label-file's. */
async function classMapOf(values: Values): Promise<ClassMap | null> {
  return typeof values['class-map'] === 'string' ? readClassMapFile(values['class-map']) : null;
}

export async function openSourceFromArgs(
  values: Values,
  model: ModelDescription,
  frameRateHz: number | undefined,
  progress?: { onProgress?: (done: number, total: number) => void; signal?: AbortSignal },
): Promise<FrameSource> {
  const classMap = await classMapOf(values);
  const spec = String(values.source);
  // with --label-file the map may be the label file's alone; without, a map for a source that has no
  // class names is refused (open-source.ts)
  const sourceMap = values['label-file'] !== undefined && (await detectSourceKind(spec)) !== 'folder' ? null : classMap;
  return openSourcePath(spec, {
    target: model.input,
    frameRateHz,
    ...modelLabelOptions(model, sourceMap),
    ...progress,
  });
}

/**
 * A trace with the --label-file imported (labels for frames the source left unlabelled, by frame
 * index or timestamp), and the provenance entry naming the file; the trace as it is without one.
 */
export async function importLabelsFromArgs(
  values: Values,
  trace: Trace,
): Promise<{ trace: Trace; entry: StoredProvenance['labelImports'][number] | null }> {
  if (typeof values['label-file'] !== 'string') return { trace, entry: null };
  const path = values['label-file'];
  const read = await readLabelFile(path, trace, trace.frameCount, await classMapOf(values));
  return {
    trace: traceWithImportedLabels(trace, read.imported, path),
    entry: { file: read.file, frames: read.imported.frames.length },
  };
}

/** What a run says about its source before it starts: the file and its hash, how classes were matched. */
export function describeSourceLines(info: SourceInfo): string {
  const lines = [`source: ${describeSourceIdentity(info.identity)}`];
  if (info.classMapping !== null) lines.push(`classes: ${describeClassMapping(info.classMapping)}`);
  return lines.map((line) => `${line}\n`).join('');
}

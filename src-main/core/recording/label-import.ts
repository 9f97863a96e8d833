import { basename } from 'node:path';
import type { SourceIdentity } from '../../../src-shared/api/source-identity';
import { KnobError } from '../../../src-shared/errors';
import type { ClassMap } from '../../../src-shared/labels/class-names';
import {
  labelFileFormatOf,
  parseLabelFile,
  resolveLabelFile,
  type LabelImport,
} from '../../../src-shared/labels/label-file';
import { LabelLayers } from '../../../src-shared/labels/label-layers';
import type { Trace } from '../../../src-shared/trace/trace';
import { sha256Hex } from '../files/sha256';
import { readUserFile, userText } from '../files/user-files';

/**
 * A label file (CSV or JSON, by frame index or timestamp: src-shared/labels/label-file.ts) read for
 * a recording: its rows resolved to the recording's frames and the model's classes (by name), and
 * the file's identity for the provenance. The one way in for label files, desk and CLI alike.
 */
export async function readLabelFile(
  path: string,
  trace: Pick<Trace, 'timestampsSeconds' | 'labelNames'>,
  frameCount: number,
  classMap: ClassMap | null,
): Promise<{ file: SourceIdentity; imported: LabelImport }> {
  const format = labelFileFormatOf(path);
  if (format === null) throw new KnobError('INVALID_INPUT', `${path}: a label file is .csv or .json`);
  const bytes = await readUserFile(path, 'table');
  const parsed = parseLabelFile(userText(bytes, path), path, format);
  const imported = resolveLabelFile(
    parsed,
    {
      frameCount,
      timestampsSeconds: trace.timestampsSeconds.subarray(0, frameCount),
      labelNames: trace.labelNames,
      // always by name, even against generated labels ('0', '1', ...): a file naming only some
      // classes in sorted order would shift them (a name the model lacks is refused instead)
      labelsFromMetadata: true,
    },
    classMap,
    path,
  );
  return { file: { kind: 'file', name: basename(path), sizeBytes: bytes.length, sha256: sha256Hex(bytes) }, imported };
}

/**
 * A complete trace (the CLI's run) with imported labels as the truth of frames the source left
 * unlabelled, kept as label layers so the file says which labels were imported.
 */
export function traceWithImportedLabels(trace: Trace, imported: LabelImport, where: string): Trace {
  const layers = new LabelLayers(trace.frameCount, trace.labels);
  layers.importTruth(imported.frames, imported.classIndices, where);
  const labels = new Int32Array(trace.frameCount);
  layers.effectiveInto(labels);
  return { ...trace, labels, labelLayers: layers.columns() };
}

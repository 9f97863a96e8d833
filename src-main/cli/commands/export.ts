import { basename } from 'node:path';
import { checkCalibratorFor } from '../../../src-shared/calibrators';
import { buildBundle } from '../../core/bundle/bundle-export';
import { writeOutputFile } from '../../core/files/output-files';
import { readUserFile } from '../../core/files/user-files';
import { loadModel } from '../../core/inference/loaded-model';
import { checkTraceRecordedWith } from '../../core/recording/model-binding';
import { readTraceFile } from '../../core/recording/trace-arrow';
import { storedProvenanceOf, unknownProvenance } from '../../core/report/provenance';
import { checkOutputFile, GATE_OPTIONS, parseCommandArgs, settingsOverTrace, UsageError } from '../cli-args';
import { MODEL_OPTIONS, modelOptionsFromArgs } from '../model-args';

/**
 * knob export --trace T --model M [settings] --out NAME.knob.zip: the tuned-calibrator bundle of a
 * recorded trace (issue 15), with the settings the trace was recorded with unless given.
 */
export async function exportCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...MODEL_OPTIONS,
    ...GATE_OPTIONS,
    trace: { type: 'string' },
    out: { type: 'string' },
    'exclude-model': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  });
  if (!values.trace) throw new UsageError('--trace T.arrow is required (the recording the setting was tuned on)');
  if (!values.out) throw new UsageError('--out NAME.knob.zip is required');
  if (!values.model) throw new UsageError('--model M is required (the model the trace was recorded with, or default)');
  const out = String(values.out);
  if (!out.endsWith('.knob.zip')) throw new UsageError('--out must end in .knob.zip (NAME.knob.zip names the bundle)');
  const name = basename(out).slice(0, -'.knob.zip'.length);
  const modelOptions = { ...modelOptionsFromArgs(values), executionProviders: ['cpu' as const] };
  await checkOutputFile(out);
  const file = await readTraceFile(values.trace);
  const { gate, calibrator } = await settingsOverTrace(values, file);
  // the description and the file are what a bundle needs: opened on the CPU, no GPU provider probed
  const model = await loadModel(modelOptions);
  try {
    const description = model.description;
    if (calibrator !== null) checkCalibratorFor(calibrator, description.classCount);
    const recorded = storedProvenanceOf(file.context);
    checkTraceRecordedWith(values.trace, recorded, description);
    const origin = `export of ${values.trace}`;
    const provenance = recorded === null ? unknownProvenance(`trace ${values.trace}`, origin) : { ...recorded, origin };
    const modelFiles = await Promise.all(description.paths.map((path) => readUserFile(path, 'model')));
    const bundle = buildBundle({
      name,
      trace: file.trace,
      model: description,
      modelFiles,
      includeModel: values['exclude-model'] !== true,
      gate,
      calibrator,
      provenance,
    });
    const path = await writeOutputFile(out, bundle.bytes);
    const members = Object.keys(bundle.manifest.members).length + 1;
    if (values.json)
      process.stdout.write(`${JSON.stringify({ path, bytes: bundle.bytes.length, manifest: bundle.manifest })}\n`);
    else {
      process.stdout.write(`${path}: ${members} members, ${bundle.bytes.length} bytes\n`);
      process.stdout.write(
        bundle.manifest.deploy.stepGraph === null
          ? `  ${bundle.manifest.deploy.stepGraphNote}\n`
          : `  step graph deploy/step.onnx and Triton repository deploy/triton/${name} (see deploy/README.md)\n`,
      );
      if (values['exclude-model']) process.stdout.write(`  model left out: ${description.sha256[0]} names it\n`);
    }
    return 0;
  } finally {
    await model.close();
  }
}

import { checkOutputFile } from '../../core/files/output-files';
import { stepsOfCall } from '../../core/calls/work-steps';
import { basename } from 'node:path';
import { loadModel } from '../../core/inference/loaded-model';
import { readTraceFile } from '../../core/recording/trace-arrow';
import { loadedTraceProvenance } from '../../core/report/provenance';
import { BUNDLE_EXTENSION } from '../../../src-shared/api/file-kinds';
import { checkBundlePath, exportBundle } from '../../core/use-cases/export-bundle';
import { GATE_OPTIONS, parseCommandArgs, settingsOverTrace } from '../cli-args';
import { UsageError } from '../usage-error';
import { commandCall } from '../command-call';
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
  checkBundlePath(out);
  const modelOptions = { ...modelOptionsFromArgs(values), executionProviders: ['cpu' as const] };
  await checkOutputFile(out);
  const call = commandCall('export', values.json === true);
  let model: Awaited<ReturnType<typeof loadModel>> | null = null;
  try {
    const file = await readTraceFile(values.trace, (read, size) => call.progress('reading the trace', read, size));
    const { gate, calibrator } = await settingsOverTrace(values, file);
    // the description and the file are what a bundle needs: opened on the CPU, no GPU provider probed
    model = await loadModel(modelOptions);
    const description = model.description;
    const bundle = await exportBundle(
      {
        path: out,
        trace: file.trace,
        traceName: values.trace,
        // the same provenance as the desk's trace.load of this file: the two bundles agree
        provenance: loadedTraceProvenance(file.context, values.trace),
        model: description,
        gate,
        calibrator,
        includeModel: values['exclude-model'] !== true,
      },
      // the desk's steps on the progress line; Ctrl-C stops between them, writing nothing
      stepsOfCall(call),
    );
    call.dispose();
    const { path, members } = bundle;
    const name = basename(out).slice(0, -BUNDLE_EXTENSION.length);
    if (values.json)
      process.stdout.write(`${JSON.stringify({ path, bytes: bundle.bytes, manifest: bundle.manifest })}\n`);
    else {
      process.stdout.write(`${path}: ${members} members, ${bundle.bytes} bytes\n`);
      process.stdout.write(
        bundle.manifest.deploy.stepGraph === null
          ? `  ${bundle.manifest.deploy.stepGraphNote}\n`
          : `  step graph deploy/step.onnx and Triton repository deploy/triton/${name} (see deploy/README.md)\n`,
      );
      if (values['exclude-model']) process.stdout.write(`  model left out: ${description.sha256[0]} names it\n`);
    }
    return 0;
  } finally {
    call.dispose();
    await model?.close();
  }
}

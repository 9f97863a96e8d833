import { checkOutputFile } from '../../core/files/output-files';
import { writeOutputFile } from '../../core/files/output-files';
import { describeFeatureTensors, exposeFeatures } from '../../core/use-cases/expose-features';
import { DEFAULT_MODEL_PATH } from '../../core/model-card/default-model';
import { parseCommandArgs } from '../cli-args';
import { UsageError } from '../usage-error';

/**
 * knob features: a classifier's penultimate activation as a `features` output (issue 31), so the
 * app records it and the feature calibrators and the feature drift signals read it; --list
 * shows what was found and every tensor of the graph, to name another with --node.
 */
export async function featuresCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    model: { type: 'string' },
    node: { type: 'string' },
    list: { type: 'boolean', default: false },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const model = values.model === undefined || values.model === 'default' ? DEFAULT_MODEL_PATH : values.model;
  if (values.list) {
    const listed = await describeFeatureTensors(model);
    if (values.json) {
      process.stdout.write(`${JSON.stringify(listed)}\n`);
      return 0;
    }
    const lines = [
      listed.layer === null
        ? `final layer: not found (${listed.refused})`
        : `final layer: ${listed.layer.found}; it reads '${listed.layer.features}'${listed.layer.head === null ? '' : ` (${listed.layer.head.width} features, ${listed.layer.head.classCount} classes)`}`,
      'tensors (name, operator, declared shape):',
      ...listed.tensors.map((t) => `  ${t.name}  ${t.op}${t.shape === null ? '' : `  ${t.shape}`}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  }
  if (values.out === undefined) throw new UsageError('--out NEW.onnx is required (or --list)');
  if (!values.out.endsWith('.onnx')) throw new UsageError(`--out names an .onnx file, got '${values.out}'`);
  await checkOutputFile(values.out);
  const exposed = await exposeFeatures(model, values.node);
  await writeOutputFile(values.out, exposed.bytes);
  const summary = {
    out: values.out,
    tensor: exposed.tensor,
    width: exposed.width,
    found: exposed.layer?.found ?? null,
    headDifference: exposed.headDifference,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else
    process.stdout.write(
      `wrote ${values.out}: '${exposed.tensor}' as the output 'features', ${exposed.width} values an image${exposed.layer === null ? '' : ` (${exposed.layer.found})`}${exposed.headDifference === null ? '' : `; the final layer maps it to the logits within ${exposed.headDifference.toExponential(1)}`}\n`,
    );
  return 0;
}

import { verifyBundle } from '../../core/bundle/bundle-verify';
import { readUserFile } from '../../core/files/user-files';
import { parseCommandArgs } from '../cli-args';
import { UsageError } from '../usage-error';

/**
 * knob verify BUNDLE [--model M [--second-model M2]]: exit 0 and what was checked when the bundle is
 * sound (the first line says so when the step graph could not be run against the app, and the
 * equivalence line why); 1 with the reason when it is not, a promised step graph missing included
 * (bundle-verify.ts says what is checked).
 */
export async function verifyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    { model: { type: 'string' }, 'second-model': { type: 'string' }, json: { type: 'boolean', default: false } },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob verify takes one bundle (NAME.knob.zip)');
  const path = positionals[0]!;
  const models = [values.model, values['second-model']].filter((p): p is string => typeof p === 'string');
  const verified = await verifyBundle(await readUserFile(path, 'bundle'), path, models);
  const { checks, equivalenceChecked } = verified;
  if (values.json) process.stdout.write(`${JSON.stringify({ path, sound: true, equivalenceChecked, checks })}\n`);
  else
    process.stdout.write(
      `${path}: sound${equivalenceChecked ? '' : ' (equivalence not checked)'}\n${checks.map((line) => `  ${line}\n`).join('')}`,
    );
  return 0;
}

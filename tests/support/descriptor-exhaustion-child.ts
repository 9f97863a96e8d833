/**
 * Run under a low descriptor limit (`ulimit -n`): holds every free descriptor, then reads and
 * writes through the app's one way in and one way out, then frees them and tries again. Prints
 * { held, read, write, retriedRead, retriedWrite } as JSON, each an error's code and message or
 * 'ok'. Run with `node --import tsx tests/support/descriptor-exhaustion-child.ts`.
 */
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeOutputFile } from '../../src-main/core/files/output-files';
import { readUserText } from '../../src-main/core/files/user-files';

/** Far above any limit the test sets: the loop ends at EMFILE long before. */
const MAX_HELD = 100_000;

async function outcome(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
    return 'ok';
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message };
  }
}

const folder = mkdtempSync(join(tmpdir(), 'knob-emfile-'));
const table = join(folder, 'table.csv');
writeFileSync(table, 'a,b\n1,2\n');
const held: number[] = [];
let openError: string | undefined;
/** Takes every free descriptor; again before each call, since the runtime may free one meanwhile. */
function exhaust(): void {
  while (held.length < MAX_HELD) {
    try {
      held.push(openSync('/dev/null', 'r'));
    } catch (error) {
      openError = (error as NodeJS.ErrnoException).code;
      return;
    }
  }
}
/**
 * The call with no descriptor free: a few tries, since the runtime can free one of its own between
 * the exhaustion and the call's open (seen once in CI); the first refusal is the outcome.
 */
async function starved(work: () => Promise<unknown>): Promise<unknown> {
  let result: unknown = 'ok';
  for (let attempt = 0; attempt < 5 && result === 'ok'; attempt++) {
    exhaust();
    result = await outcome(work);
  }
  return result;
}
const read = await starved(() => readUserText(table, 'table'));
const write = await starved(() => writeOutputFile(join(folder, 'out.txt'), 'x'));
for (const fd of held) closeSync(fd);
const retriedRead = await outcome(() => readUserText(table, 'table'));
const retriedWrite = await outcome(() => writeOutputFile(join(folder, 'out.txt'), 'x'));
process.stdout.write(JSON.stringify({ held: held.length, openError, read, write, retriedRead, retriedWrite }));

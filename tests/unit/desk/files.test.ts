/**
 * Files in and out (src-renderer/lib/desk/files.svelte.ts): an export or import says it is working
 * for as long as it runs, and afterwards shows what it wrote or why it could not.
 */
import { describe, expect, it } from 'vitest';
import { settle } from './contract-fake-api';
import { startedDesk } from './desk-harness';

describe('export and import', () => {
  it('are busy while the backend works, then show the bundle written, or the refusal', async () => {
    const { desk, api } = await startedDesk();
    api.hold('bundle.export');
    const exporting = desk.files.exportTo('/out/tuned.knob.zip');
    await settle();
    expect(desk.files.busy).toBe('export');
    api
      .waiting('bundle.export')[0]!
      .answer({ path: '/out/tuned.knob.zip', bytes: 2048, members: 9, deploy: 'a step graph' });
    await exporting;
    expect(desk.files.busy).toBeNull();
    expect(desk.files.exported?.members).toBe(9);

    api.hold('bundle.import');
    const importing = desk.files.importFrom('/out/missing.knob.zip');
    await settle();
    expect(desk.files.busy).toBe('import');
    api.waiting('bundle.import')[0]!.refuse(new Error('/out/missing.knob.zip: no such file'));
    await importing;
    expect(desk.files.busy).toBeNull();
    expect(desk.errors.export).toBe('/out/missing.knob.zip: no such file');
  });
});

/**
 * What a defect leaves behind, and the contract held on both sides:
 *  - an internal error (forced) is logged as a JSON line with its stack and a short id, and the API
 *    error the client gets carries the same id; the CLI prints the id of its log line;
 *  - results and events that break their schemas are caught (contract checking, on in every test);
 *  - bad input is not a defect: a typed error, no id.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { ApiConnection } from '../../src-main/core/backend/api-connection';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { reportFailure } from '../../src-main/cli/command-runner';
import { openLogFile } from '../../src-main/core/logging/logger';

const dir = mkdtempSync(join(tmpdir(), 'knob-log-'));

function logLines(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('internal errors', () => {
  it('a forced internal error writes a log line with its stack and id, and the API error carries the same id', async () => {
    const log = await openLogFile({ directory: join(dir, 'logs') });
    const backend = new KnobBackend({ log });
    vi.spyOn(backend.session, 'describe').mockImplementation(() => {
      throw new TypeError('forced failure in modelInfo');
    });
    const connection = new ApiConnection(backend);
    const response = await connection.receive(JSON.stringify({ id: 7, method: 'model.info', params: {} }));
    expect(response).toMatchObject({
      id: 7,
      ok: false,
      error: { code: 'INTERNAL', message: 'forced failure in modelInfo' },
    });
    const errorId = response!.ok ? null : response!.error.errorId;
    expect(errorId).toMatch(/^[0-9a-f]{8}$/);
    await log.flush();
    const file = log.currentFile()!;
    expect(file).toMatch(/knob-studio\.\d+\.log$/);
    const line = logLines(file).find((l) => l.errorId === errorId);
    expect(line).toMatchObject({ level: 50, method: 'model.info', errorId });
    const err = line!.err as { type: string; message: string; stack: string };
    expect(err).toMatchObject({ type: 'TypeError', message: 'forced failure in modelInfo' });
    expect(err.stack).toMatch(/TypeError: forced failure in modelInfo\n\s+at /);
    // app.info says where the log is.
    expect((await backend.handle('app.info', {})).logFile).toBe(file);
    await backend.close();
    await log.close();
  });

  it('bad input is a typed error without an id, logged as a warning', async () => {
    const log = await openLogFile({ directory: join(dir, 'logs-bad-input') });
    const backend = new KnobBackend({ log });
    const response = await new ApiConnection(backend).receive({
      id: 1,
      method: 'knobs.set',
      params: { gate: { zeta: -1 } },
    });
    expect(response).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(response!.ok === false && response!.error.errorId).toBeUndefined();
    await log.flush();
    expect(logLines(log.currentFile()!).find((l) => l.code === 'BAD_REQUEST')).toMatchObject({
      level: 40,
      method: 'knobs.set',
    });
    await backend.close();
    await log.close();
  });

  it('the CLI prints the id of the log line that holds the stack', async () => {
    const log = await openLogFile({ directory: dir, file: join(dir, 'cli-internal.log') });
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    let status: number;
    try {
      status = reportFailure(new RangeError('forced failure in a command'), log);
    } finally {
      // the files of a worker share this process's stderr (vitest's isolate: false)
      write.mockRestore();
    }
    expect(status).toBe(1);
    const match = /^knob: internal error ([0-9a-f]{8}): forced failure in a command \(details in (.+)\)\n$/.exec(
      written.join(''),
    );
    expect(match).not.toBeNull();
    expect(match![2]).toBe(join(dir, 'cli-internal.log'));
    await log.flush();
    const line = logLines(match![2]).find((l) => l.errorId === match![1]);
    expect((line!.err as { stack: string }).stack).toMatch(/RangeError: forced failure in a command\n\s+at /);
    await log.close();
  });

  it('the CLI logs where --log-file says, and --verbose echoes the log on stderr', () => {
    const logFile = join(dir, 'cli.log');
    const result = spawnSync(
      process.execPath,
      ['bin/knob.mjs', 'replay', '--log-file', logFile, 'missing.arrow', '--out', join(dir, 'x')],
      { encoding: 'utf8' },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^knob: missing\.arrow: /);
    const lines = logLines(logFile);
    expect(lines.some((l) => l.msg === 'knob replay')).toBe(true);
    expect(lines.some((l) => l.level === 40 && String(l.msg).startsWith('missing.arrow: '))).toBe(true);
    const verbose = spawnSync(process.execPath, ['bin/knob.mjs', '--verbose', 'response', '--log-file', logFile], {
      encoding: 'utf8',
    });
    expect(verbose.status).toBe(0);
    expect(verbose.stderr).toMatch(/"msg":"knob response"/);
  });
});

describe('the API contract', () => {
  it('a result that breaks its schema is an internal error naming the method and the field', async () => {
    const backend = new KnobBackend({ checkContract: true });
    vi.spyOn(backend.session.knobs, 'current', 'get').mockReturnValue({
      gate: DEFAULT_GATE_SETTINGS,
      calibrator: null,
      calibratorModel: null,
      version: -1,
    });
    await expect(backend.handle('knobs.get', {})).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringMatching(/the result of knobs\.get breaks the API contract: result\.version: /),
    });
    await backend.close();
  });

  it('an event that breaks its schema is refused before any listener sees it', async () => {
    const backend = new KnobBackend({ checkContract: true });
    const seen: string[] = [];
    backend.subscribe((event) => seen.push(event));
    expect(() =>
      backend.emit('knobs.changed', {
        gate: DEFAULT_GATE_SETTINGS,
        calibrator: null,
        calibratorModel: null,
        version: 1.5,
      }),
    ).toThrow(/the knobs\.changed event breaks the API contract: data\.version/);
    expect(seen).toEqual([]);
    await backend.close();
  });

  it('params are parsed once, with their defaults, before the handler runs', async () => {
    const backend = new KnobBackend();
    const spy = vi.spyOn(backend.services.files, 'load').mockResolvedValue({ path: 'x', frameCount: 1, classCount: 2 });
    await backend.handle('trace.load', { path: 'x.arrow' });
    expect(spy).toHaveBeenCalledWith('x.arrow', false, expect.objectContaining({ signal: expect.any(AbortSignal) }));
    await expect(backend.handle('trace.load', { path: '' })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/invalid params for trace\.load: params\.path: /),
    });
    expect(spy).toHaveBeenCalledTimes(1);
    await backend.close();
  });
});

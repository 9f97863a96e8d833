/** The desk tests' fake backend holds every call, result and event to the API contract. */
import { describe, expect, it } from 'vitest';
import { ContractFakeApi, ContractViolation } from './contract-fake-api';
import { knobs, recordedFrame } from './fixtures';

describe('the contract-checked fake backend', () => {
  it('refuses parameters the backend would refuse', async () => {
    const api = new ContractFakeApi().handle('knobs.set', () => knobs(1));
    await expect(api.call('knobs.set', { gate: { zeta: -1 } })).rejects.toThrow(ContractViolation);
    await expect(api.call('trace.frame', { frame: 1.5 })).rejects.toThrow(/the parameters of trace.frame/);
    expect(api.calls).toEqual([]);
  });

  it('refuses a result or an event the backend could never send', async () => {
    const api = new ContractFakeApi().handle('trace.frame', () => ({ ...recordedFrame(1, 2), recordingId: 0 }));
    await expect(api.call('trace.frame', { frame: 2 })).rejects.toThrow(/the result of trace.frame .*recordingId/);
    expect(() => api.emit('knobs.changed', { ...knobs(1), version: -1 })).toThrow(/the knobs.changed event/);
    expect(api.violations).toHaveLength(1);
  });

  it('passes what the contract allows, as parsed (defaults filled in)', async () => {
    const api = new ContractFakeApi().handle('stream.start', () => {
      throw new Error('not now');
    });
    await expect(api.call('stream.start', {})).rejects.toThrow('not now');
    expect(api.callsOf('stream.start')).toEqual([{ discard: false }]);
  });
});

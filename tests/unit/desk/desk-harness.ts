// The desk's state modules use runes ($state); their declarations come with Svelte's types, which
// the tests' TypeScript project does not load by itself.
/// <reference types="svelte" />
import type { RecentRuns } from '../../../src-shared/api/recent-runs';
import type { SessionState } from '../../../src-shared/api/session-state';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { Desk } from '../../../src-renderer/lib/desk/desk.svelte';
import type { KnobStore } from '../../../src-renderer/lib/desk/saved-knobs';
import { ContractFakeApi } from './contract-fake-api';
import { knobs, recording, sessionState } from './fixtures';

/**
 * A desk started against the contract-checked fake backend: by default a paused session with a
 * live recording (id 1) of 10 frames, knobs at version 0, no recent runs. `api` answers nothing
 * else until the test says how.
 */
export const NO_RUNS: RecentRuns = { enabled: true, folder: '/runs', limitBytes: 1 << 20, usedBytes: 0, runs: [] };

export class MemoryKnobStore implements KnobStore {
  saved: GateSettings | null = null;
  save(gate: GateSettings): void {
    this.saved = { ...gate };
  }
  restore(): Partial<GateSettings> | null {
    return this.saved;
  }
}

export async function startedDesk(
  options: { session?: SessionState; runs?: RecentRuns; api?: ContractFakeApi } = {},
): Promise<{ desk: Desk; api: ContractFakeApi; store: MemoryKnobStore }> {
  const api = options.api ?? new ContractFakeApi();
  const session = options.session ?? sessionState({ recording: recording(1, { frameCount: 10 }) });
  api
    .handle('knobs.get', () => knobs(0))
    .handle('session.get', () => session)
    .handle('runs.list', () => options.runs ?? NO_RUNS);
  const store = new MemoryKnobStore();
  const desk = new Desk(api, store);
  await desk.start();
  return { desk, api, store };
}

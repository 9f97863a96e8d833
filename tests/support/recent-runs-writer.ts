/**
 * One of several processes keeping runs in one recent-runs folder at once:
 * `node --import tsx tests/support/recent-runs-writer.ts FOLDER COUNT SEED`, forked with IPC. Opens
 * the folder, says 'ready' and waits for 'go' (so that every writer has the folder open before any
 * keeps a run, as two hosts started together do), keeps COUNT small runs one after another, then
 * the first of them again (a recording that grew), and prints the ids it was given as JSON.
 */
import { RecentRunsStore } from '../../src-main/core/recent-runs/recent-runs-store';
import { keepRequest } from './recent-run-request';

const [folder, countText, seedText] = process.argv.slice(2);
const count = Number(countText);
const seed = Number(seedText);
const store = await RecentRunsStore.open(folder!);
await new Promise<void>((resolve) => {
  process.once('message', () => resolve());
  process.send!('ready');
});
const ids: string[] = [];
for (let i = 0; i < count; i++) ids.push((await store.keep(keepRequest(20, seed + i)))!.id);
const again = await store.keep(keepRequest(24, seed, ids[0]!));
if (again?.id !== ids[0]) throw new Error(`the grown run was kept as ${again?.id}, not ${ids[0]}`);
process.stdout.write(JSON.stringify(ids));
process.disconnect();

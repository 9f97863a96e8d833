/**
 * The fake 'electron' module's utilityProcess (see index.ts): fork starts a real Node child in which
 * process.parentPort exists (parent-port-shim.mjs), so the inference process runs its
 * utility-process side.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PARENT_PORT_SHIM = join(dirname(fileURLToPath(import.meta.url)), 'parent-port-shim.mjs');

class FakeUtilityProcess extends EventEmitter {
  private readonly child: ChildProcess;
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  private exited = false;

  constructor(
    modulePath: string,
    args: string[],
    options: { execArgv?: string[]; stdio?: unknown; env?: NodeJS.ProcessEnv },
  ) {
    super();
    const pipe = (at: number) =>
      Array.isArray(options.stdio) ? options.stdio[at] === 'pipe' : options.stdio === 'pipe';
    this.child = fork(modulePath, args, {
      execArgv: [...(options.execArgv ?? []), '--import', PARENT_PORT_SHIM],
      serialization: 'advanced',
      stdio: ['ignore', pipe(1) ? 'pipe' : 'ignore', pipe(2) ? 'pipe' : 'ignore', 'ipc'],
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    this.stdout = this.child.stdout;
    this.stderr = this.child.stderr;
    this.child.on('spawn', () => this.emit('spawn'));
    this.child.on('message', (message) => this.emit('message', message));
    this.child.on('exit', (code) => {
      this.exited = true;
      this.emit('exit', code ?? 1);
    });
  }
  get pid(): number | undefined {
    return this.exited ? undefined : this.child.pid;
  }
  postMessage(message: unknown): void {
    this.child.send(message as never);
  }
  kill(): boolean {
    return this.child.kill();
  }
}

export const utilityProcess = {
  forks: [] as Array<{ modulePath: string; options: unknown }>,
  children: [] as FakeUtilityProcess[],
  fork(modulePath: string, args: string[] = [], options: Record<string, unknown> = {}) {
    utilityProcess.forks.push({ modulePath, options });
    const child = new FakeUtilityProcess(modulePath, args, options);
    utilityProcess.children.push(child);
    return child;
  },
};

/** The fake 'electron' module's MessagePortMain and MessageChannelMain (see index.ts): real Node ports. */
import { EventEmitter } from 'node:events';
import type { MessagePort as NodeMessagePort } from 'node:worker_threads';

/** Electron's MessagePortMain over a real (Node) MessagePort: 'message' events carry { data, ports }. */
export class FakeMessagePortMain extends EventEmitter {
  constructor(readonly port: NodeMessagePort | MessagePort) {
    super();
    const node = port as NodeMessagePort;
    node.on('message', (data: unknown) => this.emit('message', { data, ports: [] }));
    node.on('close', () => this.emit('close'));
  }
  postMessage(message: unknown, transfer?: unknown[]): void {
    (this.port as NodeMessagePort).postMessage(message, transfer as never);
  }
  start(): void {
    (this.port as NodeMessagePort).start();
  }
  close(): void {
    (this.port as NodeMessagePort).close();
  }
}

export class MessageChannelMain {
  readonly port1: FakeMessagePortMain;
  readonly port2: FakeMessagePortMain;
  constructor() {
    const channel = new MessageChannel();
    this.port1 = new FakeMessagePortMain(channel.port1);
    this.port2 = new FakeMessagePortMain(channel.port2);
  }
}

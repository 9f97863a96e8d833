/**
 * The fake 'electron' module's state (see index.ts), on globalThis: a test that re-imports the
 * preload (a page reload) shares it.
 */
import type { FakeBrowserWindow, FakeWebContents } from './index';

export interface FakeFrame {
  url: string;
  parent: FakeFrame | null;
  origin: string;
}

export type Handler = (event: unknown, ...args: unknown[]) => unknown;
export type Listener = (event: unknown, ...args: unknown[]) => void;

export interface RendererContext {
  contents: FakeWebContents;
  frame: FakeFrame;
  listeners: Array<{ channel: string; listener: Listener }>;
}

export interface FakeState {
  handlers: Map<string, Handler>;
  mainListeners: Map<string, Listener[]>;
  exposed: Map<string, unknown>;
  windows: FakeBrowserWindow[];
  nextContentsId: number;
  renderer: RendererContext | null;
  renderers: RendererContext[];
  protocolHandlers: Map<string, (request: Request) => Promise<Response> | Response>;
  privilegedSchemes: unknown[];
  applicationMenu: unknown;
  dialogCalls: Array<{ kind: string; options: unknown }>;
  dialogAnswers: unknown[];
  openedPaths: string[];
  paths: Map<string, string>;
  singleInstance: boolean;
  quitCalls: number;
  exitCode: number | null;
  ready: { promise: Promise<void>; resolve: () => void };
  readyResolved: boolean;
  sandboxEnabled: boolean;
  /** The work areas of the attached displays (screen.getAllDisplays). */
  displays: Array<{ x: number; y: number; width: number; height: number }>;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const STATE_KEY = Symbol.for('knob.fake-electron');
const globalState = globalThis as unknown as Record<symbol, FakeState | undefined>;
export const state: FakeState = (globalState[STATE_KEY] ??= {
  handlers: new Map(),
  mainListeners: new Map(),
  exposed: new Map(),
  windows: [],
  nextContentsId: 1,
  renderer: null,
  renderers: [],
  protocolHandlers: new Map(),
  privilegedSchemes: [],
  applicationMenu: null,
  dialogCalls: [],
  dialogAnswers: [],
  openedPaths: [],
  paths: new Map(),
  singleInstance: true,
  quitCalls: 0,
  exitCode: null,
  ready: deferred(),
  readyResolved: false,
  sandboxEnabled: false,
  displays: [{ x: 0, y: 0, width: 1920, height: 1080 }],
});

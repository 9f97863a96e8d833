import { ipcMain, type BrowserWindow, type WebContents } from 'electron';
import { IPC_SHELL_CHANNEL, IPC_SHELL_READY_CHANNEL, type ShellCommand } from '../../src-shared/api/bridge';
import { isTrustedFrame, type TrustedOrigin } from './security';

/**
 * Commands from the shell to the page (menus, files opened with the app, recovered crashes). A
 * command sent before the page listens (the file on the first launch's command line, the notice
 * after a crash's reload) waits until the page says it listens; a page that starts loading again
 * listens no more until it says so again.
 */
export class ShellCommands {
  private readonly listening = new Set<number>();
  private readonly waiting = new Map<number, ShellCommand[]>();

  constructor(private readonly trust: TrustedOrigin) {}

  register(): void {
    ipcMain.on(IPC_SHELL_READY_CHANNEL, (event) => {
      if (!isTrustedFrame(event.senderFrame, this.trust)) return;
      this.listening.add(event.sender.id);
      for (const command of this.waiting.get(event.sender.id)?.splice(0) ?? []) this.deliver(event.sender, command);
    });
  }

  /** Follows one window's page: a new load, or its renderer gone, stops delivery until it listens again. */
  track(contents: WebContents): void {
    contents.on('did-start-loading', () => this.listening.delete(contents.id));
    contents.on('render-process-gone', () => this.listening.delete(contents.id));
    contents.once('destroyed', () => {
      this.listening.delete(contents.id);
      this.waiting.delete(contents.id);
    });
  }

  send(window: BrowserWindow, command: ShellCommand): void {
    const contents = window.webContents;
    if (this.listening.has(contents.id)) this.deliver(contents, command);
    else this.waiting.set(contents.id, [...(this.waiting.get(contents.id) ?? []), command]);
  }

  private deliver(contents: WebContents, command: ShellCommand): void {
    if (!contents.isDestroyed()) contents.send(IPC_SHELL_CHANNEL, command);
  }
}

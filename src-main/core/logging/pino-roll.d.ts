// pino-roll ships no types; this is the part of its API the logger uses.
declare module 'pino-roll' {
  import type { EventEmitter } from 'node:events';
  import type { DestinationStream } from 'pino';

  /** A SonicBoom stream: what pino-roll returns, and what pino.destination returns too. */
  export interface RollingDestination extends DestinationStream, EventEmitter {
    /** The file being written now (null until it is open; it changes when the log rolls over). */
    readonly file: string | null;
    flush(callback?: (error?: Error) => void): void;
    end(): void;
  }

  export default function build(options: {
    file: string;
    size?: number | string;
    frequency?: 'daily' | 'hourly' | number;
    extension?: string;
    mkdir?: boolean;
    symlink?: boolean;
    sync?: boolean;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
  }): Promise<RollingDestination>;
}

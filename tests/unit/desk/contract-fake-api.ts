import type { KnobApi } from '../../../src-shared/api/client';
import {
  API_EVENTS,
  API_METHODS,
  type ApiEvent,
  type ApiEventData,
  type ApiMethod,
  type ApiParams,
  type ApiParsedParams,
  type ApiResult,
} from '../../../src-shared/api/contract';
import type { z } from 'zod';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { KnobError } from '../../../src-shared/errors';
import { describeIssues } from '../../../src-shared/zod-issues';

/**
 * A fake backend at the API contract's boundary, for the desk's state modules in unit tests (no
 * browser, no backend): every call's parameters, every result it returns and every event it emits
 * are parsed with the contract's own schemas (src-shared/api/contract.ts, the ones the backend
 * checks its results with), so a module that sends what the backend would refuse, or a test whose
 * fixture the backend could never send, fails. A method answers only when the test gave it a
 * handler; `hold` makes its calls wait until the test answers them, one by one, in any order.
 */
type Handler<M extends ApiMethod> = (params: ApiParsedParams<M>) => ApiResult<M> | Promise<ApiResult<M>>;

export interface HeldCall<M extends ApiMethod> {
  params: ApiParsedParams<M>;
  answer(result: ApiResult<M>): void;
  refuse(error: Error): void;
}

export class ContractViolation extends Error {}

function checked<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ContractViolation(`${what} breaks the API contract: ${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

export class ContractFakeApi implements KnobApi {
  /** Every call made, in order, with its parameters as the backend would parse them. */
  readonly calls: Array<{ method: ApiMethod; params: unknown }> = [];
  /** Contract violations met inside a call (also thrown at the caller, which may swallow them). */
  readonly violations: ContractViolation[] = [];
  private readonly handlers = new Map<ApiMethod, (params: never) => unknown>();
  private readonly held = new Map<ApiMethod, HeldCall<ApiMethod>[]>();
  private readonly listeners = new Map<ApiEvent, Set<(data: never) => void>>();

  handle<M extends ApiMethod>(method: M, handler: Handler<M>): this {
    this.handlers.set(method, handler as (params: never) => unknown);
    return this;
  }

  /** Calls of `method` wait in `waiting(method)` until answered. */
  hold<M extends ApiMethod>(method: M): this {
    this.held.set(method, []);
    return this;
  }

  waiting<M extends ApiMethod>(method: M): HeldCall<M>[] {
    return (this.held.get(method) ?? []) as unknown as HeldCall<M>[];
  }

  callsOf<M extends ApiMethod>(method: M): ApiParsedParams<M>[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.params as ApiParsedParams<M>);
  }

  async call<M extends ApiMethod>(
    method: M,
    params: ApiParams<M>,
    options?: { signal?: CancelSignal },
  ): Promise<ApiResult<M>> {
    const spec = API_METHODS[method];
    try {
      const parsed = checked(spec.params, params, `the parameters of ${method}`) as ApiParsedParams<M>;
      this.calls.push({ method, params: parsed });
      const result = await this.answer(method, parsed, options?.signal);
      checked(spec.result, result, `the result of ${method}`);
      // what crosses the boundary is a copy, as over IPC or a socket
      return structuredClone(result) as ApiResult<M>;
    } catch (error) {
      if (error instanceof ContractViolation) this.violations.push(error);
      throw error;
    }
  }

  on<E extends ApiEvent>(event: E, listener: (data: ApiEventData<E>) => void): () => void {
    const set = this.listeners.get(event) ?? new Set();
    set.add(listener as (data: never) => void);
    this.listeners.set(event, set);
    return () => set.delete(listener as (data: never) => void);
  }

  /** The backend sends an event (checked against its schema first). */
  emit<E extends ApiEvent>(event: E, data: ApiEventData<E>): void {
    checked(API_EVENTS[event], data, `the ${event} event`);
    for (const listener of this.listeners.get(event) ?? []) listener(structuredClone(data) as never);
  }

  sendFrame(): void {}

  private answer<M extends ApiMethod>(method: M, params: ApiParsedParams<M>, signal?: CancelSignal): Promise<unknown> {
    const queue = this.held.get(method);
    if (queue !== undefined)
      return new Promise((answer, refuse) => {
        queue.push({ params, answer, refuse } as HeldCall<ApiMethod>);
        signal?.addEventListener('abort', () => refuse(new KnobError('CANCELLED', `${method} cancelled`)));
      });
    const handler = this.handlers.get(method);
    if (handler === undefined) return Promise.reject(new Error(`the fake backend has no ${method}`));
    return Promise.resolve().then(() => (handler as Handler<M>)(params));
  }
}

/** Lets every pending promise callback run (the fake answers asynchronously, as a backend does). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

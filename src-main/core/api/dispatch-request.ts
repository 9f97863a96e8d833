import { API_METHODS, isApiMethod, type ApiMethod } from '../../../src-shared/api/contract';
import {
  MAX_REQUEST_BYTES,
  RequestEnvelopeSchema,
  type RequestId,
  type ResponseEnvelope,
} from '../../../src-shared/api/envelope';
import { KnobError, toErrorPayload } from '../../../src-shared/errors';
import type { KnobBackend } from '../backend/knob-backend';

function describeIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>, prefix: string): string {
  return issues
    .map((issue) => `${[prefix, ...issue.path.map(String)].filter(Boolean).join('.')}: ${issue.message}`)
    .join('; ');
}

/**
 * Turns one untrusted request (JSON text from a socket, or a structured-clone object from IPC)
 * into one response. Never throws: every failure becomes { ok: false, error: { code, message } }.
 */
export async function dispatchRequest(backend: KnobBackend, raw: unknown): Promise<ResponseEnvelope> {
  let id: RequestId | null = null;
  try {
    let message: unknown = raw;
    if (typeof raw === 'string') {
      if (raw.length > MAX_REQUEST_BYTES || Buffer.byteLength(raw, 'utf8') > MAX_REQUEST_BYTES) {
        throw new KnobError(
          'REQUEST_TOO_LARGE',
          `request of ${Buffer.byteLength(raw, 'utf8')} bytes exceeds ${MAX_REQUEST_BYTES}`,
        );
      }
      try {
        message = JSON.parse(raw);
      } catch {
        throw new KnobError('BAD_REQUEST', 'request is not valid JSON');
      }
    }
    const envelope = RequestEnvelopeSchema.safeParse(message);
    if (!envelope.success)
      throw new KnobError('BAD_REQUEST', `malformed request: ${describeIssues(envelope.error.issues, '')}`);
    id = envelope.data.id;
    const { method } = envelope.data;
    if (!isApiMethod(method)) throw new KnobError('UNKNOWN_METHOD', `unknown method '${method.slice(0, 64)}'`);
    const params = API_METHODS[method].params.safeParse(envelope.data.params ?? {});
    if (!params.success)
      throw new KnobError(
        'BAD_REQUEST',
        `invalid params for ${method}: ${describeIssues(params.error.issues, 'params')}`,
      );
    const result = await backend.handle(method as ApiMethod, params.data as never);
    return { id, ok: true, result };
  } catch (error) {
    return { id, ok: false, error: toErrorPayload(error) };
  }
}

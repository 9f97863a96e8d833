import { z } from 'zod';
import { KNOB_ERROR_CODES } from '../errors';

/**
 * Wire format shared by every transport (Electron IPC and the WebSocket host):
 *   request  { id, method, params }
 *   cancel   { cancel: id }            (aborts that request's work; it then answers CANCELLED)
 *   response { id, ok: true, result } | { id, ok: false, error: { code, message, errorId? } }
 *   event    { event, data }
 * Requests larger than MAX_REQUEST_BYTES are refused before parsing.
 */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export const RequestIdSchema = z.union([z.number().int().nonnegative(), z.string().max(64)]);
export type RequestId = z.infer<typeof RequestIdSchema>;

export const RequestEnvelopeSchema = z.strictObject({
  id: RequestIdSchema,
  method: z.string().min(1).max(64),
  params: z.unknown().optional(),
});
export type RequestEnvelope = z.infer<typeof RequestEnvelopeSchema>;

export const CancelEnvelopeSchema = z.strictObject({ cancel: RequestIdSchema });
export type CancelEnvelope = z.infer<typeof CancelEnvelopeSchema>;

export const ErrorPayloadSchema = z.strictObject({
  code: z.enum(KNOB_ERROR_CODES),
  message: z.string(),
  errorId: z.string().optional(),
});

export type ResponseEnvelope =
  | { id: RequestId | null; ok: true; result: unknown }
  | { id: RequestId | null; ok: false; error: z.infer<typeof ErrorPayloadSchema> };

export interface EventEnvelope {
  event: string;
  data: unknown;
}

import type { z } from 'zod';
import { KnobError, type KnobErrorCode } from './errors';

/**
 * How every schema failure reads, wherever it happens (API parameters, settings files, sidecars,
 * schedules, metadata): `path.to.field: problem; other.field: problem`. The root of the checked
 * value is named by `root` when a problem has no path. Values are never quoted, so a message
 * cannot echo the contents of a file.
 */
export interface SchemaIssue {
  readonly path: ReadonlyArray<PropertyKey>;
  readonly message: string;
}

export function describeIssues(issues: ReadonlyArray<SchemaIssue>, root = '(root)', prefix: string[] = []): string {
  return issues
    .map((issue) => {
      const path = [...prefix, ...issue.path.map(String)].join('.');
      return `${path === '' ? root : path}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * Parses untrusted input against a schema: the parsed value, or a typed error `<what>: <issues>`
 * naming every offending field.
 */
export function parseWithSchema<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  failure: { code: KnobErrorCode; what: string; root?: string },
): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new KnobError(failure.code, `${failure.what}: ${describeIssues(parsed.error.issues, failure.root)}`);
  return parsed.data;
}

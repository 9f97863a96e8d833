import { KnobError } from '../../../src-shared/errors';
import { inputLimit } from './input-limits';

/**
 * Text fields read from a file (labels, class names, metadata values, sources) checked against the
 * `text` input limit as they are read: a 20 MB label was repeated into a 360 MB report and one
 * 360 MB API message. The error names the file and the field, never quotes the text.
 */
export function checkTextField(value: string, file: string, field: string): string {
  const maxChars = inputLimit('text');
  if (value.length > maxChars)
    throw new KnobError(
      'INVALID_INPUT',
      `${file}: ${field} is ${value.length} characters long, over the limit of ${maxChars} (raise it with --input-limit text=COUNT)`,
    );
  return value;
}

/** Every string in a parsed JSON value (object keys too), each held to the same limit. */
export function checkTextTree(value: unknown, file: string, field: string): void {
  if (typeof value === 'string') checkTextField(value, file, field);
  else if (Array.isArray(value)) value.forEach((item, i) => checkTextTree(item, file, `${field}[${i}]`));
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) {
      checkTextField(key, file, `a key of ${field}`);
      checkTextTree(item, file, `${field}.${key.slice(0, 64)}`);
    }
}

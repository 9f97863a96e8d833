import { KnobError } from '../errors';
import { parseJsonText } from '../json-text';
import type { ClassMap } from './class-names';

/**
 * A class map file: which model label each source name (a folder, a manifest's label, an imported
 * label) counts as. Two forms, told apart by the first non-blank character:
 *  - JSON, an object of strings: { "car": "automobile", "kitty": "cat" };
 *  - text, one pair per line, `source -> model label` or `source,model label`; `#` starts a
 *    comment line, blank lines are skipped.
 * A model label `#N` names class index N (for models whose labels are not unique once folded).
 */
const MAX_NAME_CHARS = 4096;

function checkName(value: unknown, where: string, what: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new KnobError('INVALID_INPUT', `${where}: ${what} is not a non-empty name`);
  if (value.length > MAX_NAME_CHARS)
    throw new KnobError('INVALID_INPUT', `${where}: ${what} is over ${MAX_NAME_CHARS} characters`);
  return value.trim();
}

function add(map: Map<string, string>, from: string, to: string, where: string, what: string): void {
  const previous = map.get(from);
  if (previous !== undefined && previous !== to)
    throw new KnobError(
      'INVALID_INPUT',
      `${where}: ${what} maps '${from}' again (to '${to}', before to '${previous}')`,
    );
  map.set(from, to);
}

export function parseClassMapText(text: string, where: string): ClassMap {
  const map = new Map<string, string>();
  if (/^[[{]/u.test(text.trimStart())) {
    const raw = parseJsonText(text, where);
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new KnobError('INVALID_INPUT', `${where}: a JSON class map is an object of names`);
    for (const [from, to] of Object.entries(raw as Record<string, unknown>))
      add(map, checkName(from, where, 'a key'), checkName(to, where, `the value of '${from}'`), where, 'the file');
  } else {
    text.split(/\r?\n/u).forEach((line, i) => {
      const trimmed = line.trim();
      if (trimmed === '' || trimmed.startsWith('#')) return;
      const arrow = trimmed.indexOf('->');
      const split = arrow >= 0 ? arrow : trimmed.indexOf(',');
      if (split < 0) throw new KnobError('INVALID_INPUT', `${where}: line ${i + 1} is not 'source -> model label'`);
      const what = `line ${i + 1}`;
      const from = checkName(trimmed.slice(0, split), where, `${what}'s source name`);
      const to = checkName(trimmed.slice(split + (arrow >= 0 ? 2 : 1)), where, `${what}'s model label`);
      add(map, from, to, where, what);
    });
  }
  if (map.size === 0) throw new KnobError('INVALID_INPUT', `${where}: the class map is empty`);
  return map;
}

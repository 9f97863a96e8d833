import { KnobError } from './errors';

/**
 * JSON from a file the user named: nesting deeper than `maxDepth` is refused before parsing (a
 * deeply nested file would otherwise end in a bare "Maximum call stack size exceeded"), and no
 * error quotes the text (the parser's own message does, and the file may hold secrets).
 */
export const MAX_JSON_DEPTH = 64;

export function parseJsonText(text: string, source: string, maxDepth = MAX_JSON_DEPTH): unknown {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth)
        throw new KnobError('INVALID_INPUT', `${source}: JSON nested deeper than ${maxDepth} levels`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new KnobError('INVALID_INPUT', `${source}: not valid JSON`);
  }
}

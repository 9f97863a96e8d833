/**
 * Hostile input for class names, class maps and label files (issue 27 review): a source with
 * 100,000 classes matched in sorted order in linear-ish time, a class map whose keys fold alike
 * with different targets, and a CSV label file with a quoted cell of millions of characters.
 */
import { describe, expect, it } from 'vitest';
import { parseClassMapText } from '../../src-shared/labels/class-map-text';
import { matchClassNames } from '../../src-shared/labels/class-names';
import { parseLabelFile } from '../../src-shared/labels/label-file';
import { invalidInputMessage } from '../support/refusals';

const refusal = invalidInputMessage;

describe('class names at scale and under ambiguity', () => {
  /** n folder names in a scrambled order (7919 is prime to n), and the model's n generated labels. */
  const folders = (n: number) => ({
    names: Array.from({ length: n }, (_, i) => `class_${String((i * 7919) % n).padStart(6, '0')}`),
    labels: Array.from({ length: n }, (_, i) => String(i)),
  });

  it('100,000 folders in sorted order map each to its sorted position', () => {
    const { names, labels } = folders(100_000);
    const mapping = matchClassNames(names, { names: labels, fromMetadata: false }, null, 'big');
    expect(mapping.rule).toBe('sorted-order');
    // one assertion over every pair (100,000 expect calls would be the test's own cost)
    const wrong = mapping.pairs.filter(
      (p, i) => p.sourceName !== names[i] || p.modelIndex !== Number(names[i]!.slice(6)),
    );
    expect(wrong).toEqual([]);
  }, 60_000);

  it('reads each name a bounded number of times, not once per other name (no quadratic search)', () => {
    // counted, not timed: every element read of both name lists goes through a proxy; an indexOf
    // per name reads about n^2 / 2 of them (4.5 million here), a sort-based match n log n
    const n = 3_000;
    const { names, labels } = folders(n);
    let reads = 0;
    const counted = (list: string[]) =>
      new Proxy(list, {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver);
        },
      });
    const mapping = matchClassNames(counted(names), { names: counted(labels), fromMetadata: false }, null, 'big');
    expect(mapping.rule).toBe('sorted-order');
    expect(reads).toBeGreaterThan(n);
    expect(reads).toBeLessThan(50 * n);
  });

  it('a class map whose keys fold alike but map apart refuses a name that only matches them folded', () => {
    const map = parseClassMapText('Kitty -> cat\nkitty -> dog\n', 'map.txt');
    const model = { names: ['cat', 'dog'], fromMetadata: true };
    // an exact key still decides
    expect(matchClassNames(['Kitty'], model, map, 'folder').pairs[0]!.modelIndex).toBe(0);
    expect(matchClassNames(['kitty'], model, map, 'folder').pairs[0]!.modelIndex).toBe(1);
    const message = refusal(() => matchClassNames(['KITTY'], model, map, 'folder'));
    expect(message).toMatch(/folder: 'KITTY' matches the class map's 'Kitty' \(-> 'cat'\) and 'kitty' \(-> 'dog'\)/);
    // keys that fold alike and agree are fine
    const agreeing = parseClassMapText('Kitty -> cat\nkitty -> cat\n', 'map.txt');
    expect(matchClassNames(['KITTY'], model, agreeing, 'folder').pairs[0]!.modelIndex).toBe(0);
  });
});

describe('label files with absurd cells', () => {
  it('a quoted cell of ten million characters is refused by line, not a stack overflow', () => {
    const text = `frame,label\n0,"${'a'.repeat(10_000_000)}"\n`;
    expect(refusal(() => parseLabelFile(text, 'huge.csv', 'csv'))).toMatch(
      /huge\.csv: line 2: label is over 4096 characters/,
    );
    const unclosed = `frame,label\n0,"${'a'.repeat(10_000_000)}\n`;
    expect(refusal(() => parseLabelFile(unclosed, 'open.csv', 'csv'))).toMatch(
      /open\.csv: line 2: a quoted cell is not closed/,
    );
  });

  it('quoted cells keep their meaning: "" is a quote, text after the closing quote is refused', () => {
    const parsed = parseLabelFile('frame,label\n0, "a ""b"", c" \n', 'q.csv', 'csv');
    expect(parsed.rows[0]!.label).toBe('a "b", c');
    expect(refusal(() => parseLabelFile('frame,label\n0,"a"b\n', 'q.csv', 'csv'))).toMatch(/text after a quoted cell/);
    expect(refusal(() => parseLabelFile('frame,label\n0,"a""\n', 'q.csv', 'csv'))).toMatch(/line 2: /);
  });
});

/**
 * Class names matched by name (issue 27): folding, the errors that list both sets, class maps (text
 * and JSON), and the one case that takes sorted order (a model with no label metadata).
 */
import { describe, expect, it } from 'vitest';
import { invalidInputMessage } from '../support/refusals';
import { parseClassMapText } from '../../src-shared/labels/class-map-text';
import { describeClassMapping, foldClassName, matchClassNames } from '../../src-shared/labels/class-names';

const CIFAR = ['airplane', 'automobile', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck'];
const model = { names: CIFAR, fromMetadata: true };

describe('class names by name', () => {
  it('folds case, spaces, underscores and hyphens, and nothing else', () => {
    expect(foldClassName('Ankle boot')).toBe('ankleboot');
    expect(foldClassName('ANKLE_BOOT')).toBe(foldClassName('ankle-boot'));
    expect(foldClassName('T-shirt/top')).toBe('tshirt/top');
    expect(foldClassName('cat')).not.toBe(foldClassName('cats'));
  });

  it('matches folders to the model by name, not by their sorted order', () => {
    const mapping = matchClassNames(['cat', 'Dog', 'truck'], model, null, 'imgs');
    expect(mapping.rule).toBe('by-name');
    expect(mapping.pairs.map((p) => p.modelIndex)).toEqual([3, 5, 9]);
    expect(mapping.pairs[1]).toEqual({ sourceName: 'Dog', modelIndex: 5, modelLabel: 'dog' });
    expect(describeClassMapping(mapping)).toMatch(/3 classes matched .* by name.*Dog -> dog \(5\)/);
  });

  it('refuses names the model does not know, listing both sets', () => {
    const message = invalidInputMessage(() => matchClassNames(['car', 'cat', 'dog'], model, null, 'imgs'));
    expect(message).toMatch(/^imgs: class names the model does not know: 'car'/);
    expect(message).toContain("'airplane', 'automobile'");
    expect(message).toContain('class map');
  });

  it('an explicit class map maps the unknown names; the others still match by name', () => {
    const map = parseClassMapText('# folders of the field set\ncar -> Automobile\nkitty,cat\n', 'map.txt');
    const mapping = matchClassNames(['car', 'kitty', 'dog'], model, map, 'imgs');
    expect(mapping.rule).toBe('class-map');
    expect(mapping.pairs.map((p) => p.modelIndex)).toEqual([1, 3, 5]);
    const json = parseClassMapText('{ "car": "#1" }', 'map.json');
    expect(matchClassNames(['car'], model, json, 'imgs').pairs[0]!.modelIndex).toBe(1);
    expect(invalidInputMessage(() => matchClassNames(['car'], model, new Map([['car', 'lorry']]), 'imgs'))).toMatch(
      /the class map names 'lorry', which the model does not have/,
    );
  });

  it('class map files: malformed, empty and contradictory files are refused by line', () => {
    expect(invalidInputMessage(() => parseClassMapText('car automobile\n', 'm.txt'))).toMatch(/m\.txt: line 1 is not/);
    expect(invalidInputMessage(() => parseClassMapText('\n# nothing\n', 'm.txt'))).toMatch(/the class map is empty/);
    expect(invalidInputMessage(() => parseClassMapText('a -> cat\na -> dog\n', 'm.txt'))).toMatch(
      /line 2 maps 'a' again/,
    );
    expect(invalidInputMessage(() => parseClassMapText('["a"]', 'm.json'))).toMatch(/an object of names/);
    expect(invalidInputMessage(() => parseClassMapText('{"a": 3}', 'm.json'))).toMatch(/the value of 'a'/);
    expect(invalidInputMessage(() => parseClassMapText('a -> \n', 'm.txt'))).toMatch(/line 1's model label/);
  });

  it('labels that fold alike are ambiguous; #N names a class by index', () => {
    const twins = { names: ['cat', 'Cat', 'dog'], fromMetadata: true };
    expect(invalidInputMessage(() => matchClassNames(['cat'], twins, null, 'imgs'))).toMatch(
      /'cat' and 'Cat' are the same name/,
    );
  });

  it('a model without label metadata takes the names in sorted order, and says so', () => {
    const generated = { names: ['0', '1', '2', '3'], fromMetadata: false };
    const mapping = matchClassNames(['dog', 'cat'], generated, null, 'imgs');
    expect(mapping.rule).toBe('sorted-order');
    expect(mapping.pairs).toEqual([
      { sourceName: 'dog', modelIndex: 1, modelLabel: '1' },
      { sourceName: 'cat', modelIndex: 0, modelLabel: '0' },
    ]);
    expect(describeClassMapping(mapping)).toMatch(/sorted order .* no label metadata/);
    expect(invalidInputMessage(() => matchClassNames(['a', 'b', 'c', 'd', 'e'], generated, null, 'imgs'))).toMatch(
      /5 classes .* the model has 4/,
    );
  });
});

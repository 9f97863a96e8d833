import { z } from 'zod';
import { KnobError } from '../errors';

/**
 * Matching a source's class names (ImageFolder folders, a manifest's label column, an imported
 * label file) to the model's classes. Names are matched by name, never by position: two folders
 * sorted alphabetically ('car', 'cat', 'dog') say nothing about the model's order, and matching by
 * position silently relabels every frame (issue 27). Folding ignores case, spaces, underscores and
 * hyphens ('Ankle boot' = 'ankle_boot' = 'ANKLE-BOOT'). A name the model does not know is an error
 * listing both sets, unless an explicit class map says which model label it is. Only a model with
 * no label metadata (its labels generated as class indices) takes the names in sorted order, and
 * the match says so.
 */

/** A name with case, whitespace, underscores and hyphens folded away (Unicode NFKC first). */
export function foldClassName(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s_-]+/gu, '');
}

export const CLASS_MATCH_RULES = ['by-name', 'class-map', 'sorted-order'] as const;
export type ClassMatchRule = (typeof CLASS_MATCH_RULES)[number];

export const CLASS_MATCH_RULE_LABELS: Record<ClassMatchRule, string> = {
  'by-name': "matched to the model's labels by name (case, spaces, _ and - folded)",
  'class-map': 'mapped by the class map given',
  'sorted-order': 'taken in sorted order as classes 0, 1, ... (the model has no label metadata)',
};

/** How a source's class names became the model's class indices: kept in the trace's provenance. */
export const ClassMappingSchema = z.strictObject({
  rule: z.enum(CLASS_MATCH_RULES),
  /** Each source name with the model class it counts as. */
  pairs: z
    .array(
      z.strictObject({
        sourceName: z.string().max(4096),
        modelIndex: z.number().int().nonnegative(),
        modelLabel: z.string().max(4096),
      }),
    )
    .max(100_000),
});
export type ClassMapping = z.infer<typeof ClassMappingSchema>;

/** An explicit class map: source name -> model label (as the model names it, folded when matched). */
export type ClassMap = ReadonlyMap<string, string>;

export interface ModelLabels {
  names: readonly string[];
  /** True when the names are the model's own (metadata or sidecar); false when generated. */
  fromMetadata: boolean;
}

const MAX_LISTED = 12;

function listNames(names: readonly string[]): string {
  const shown = names.slice(0, MAX_LISTED).map((n) => `'${n}'`);
  return names.length > MAX_LISTED ? `${shown.join(', ')}, ... (${names.length} in all)` : shown.join(', ');
}

/** The model's labels by folded name; two labels that fold alike make matching ambiguous. */
function foldedIndex(labels: readonly string[], what: string): Map<string, number> {
  const index = new Map<string, number>();
  labels.forEach((label, i) => {
    const key = foldClassName(label);
    const other = index.get(key);
    if (other !== undefined)
      throw new KnobError(
        'INVALID_INPUT',
        `${what}: the model's labels '${labels[other]}' and '${label}' are the same name once case, spaces, _ and - are folded; give a class map naming classes by index`,
      );
    index.set(key, i);
  });
  return index;
}

/** A map target: a model label, or `#N` for class index N (for models whose labels fold alike). */
function mapTarget(target: string, labels: readonly string[], index: Map<string, number>): number | undefined {
  const byIndex = /^#(\d+)$/u.exec(target);
  if (byIndex !== null) {
    const i = Number(byIndex[1]);
    return i < labels.length ? i : undefined;
  }
  return index.get(foldClassName(target));
}

/**
 * The model class of each source name (in the order given), and the mapping to record. `where`
 * names the source in errors. Throws INVALID_INPUT naming every unknown name and the model's
 * labels when a name matches nothing.
 */
export function matchClassNames(
  sourceNames: readonly string[],
  model: ModelLabels,
  classMap: ClassMap | null,
  where: string,
): ClassMapping {
  const labels = model.names;
  if (classMap === null && !model.fromMetadata) {
    if (sourceNames.length > labels.length)
      throw new KnobError(
        'INVALID_INPUT',
        `${where}: ${sourceNames.length} classes (${listNames(sourceNames)}), the model has ${labels.length}`,
      );
    // each name's sorted position by one map (an indexOf per name is quadratic: 100,000 folders)
    const position = new Map<string, number>();
    [...sourceNames].sort().forEach((name, i) => {
      if (!position.has(name)) position.set(name, i);
    });
    return {
      rule: 'sorted-order',
      pairs: sourceNames.map((sourceName) => {
        const modelIndex = position.get(sourceName)!;
        return { sourceName, modelIndex, modelLabel: labels[modelIndex]! };
      }),
    };
  }
  const index = foldedIndex(labels, where);
  // the map's keys by folded name; keys that fold alike but map apart decide only by exact name
  const folded = new Map<string, { from: string; to: string; other?: { from: string; to: string } }>();
  if (classMap !== null)
    for (const [from, to] of classMap) {
      const key = foldClassName(from);
      const seen = folded.get(key);
      if (seen === undefined) folded.set(key, { from, to });
      else if (seen.to !== to && seen.other === undefined) seen.other = { from, to };
    }
  const foldedTarget = (sourceName: string): string | undefined => {
    const entry = folded.get(foldClassName(sourceName));
    if (entry?.other !== undefined)
      throw new KnobError(
        'INVALID_INPUT',
        `${where}: '${sourceName}' matches the class map's '${entry.from}' (-> '${entry.to}') and '${entry.other.from}' (-> '${entry.other.to}') once case, spaces, _ and - are folded; name it exactly in the class map`,
      );
    return entry?.to;
  };
  const unknown: string[] = [];
  const badTargets: string[] = [];
  const pairs = sourceNames.map((sourceName) => {
    const mapped = classMap === null ? undefined : (classMap.get(sourceName) ?? foldedTarget(sourceName));
    const modelIndex = mapped === undefined ? index.get(foldClassName(sourceName)) : mapTarget(mapped, labels, index);
    if (modelIndex === undefined) (mapped === undefined ? unknown : badTargets).push(mapped ?? sourceName);
    return { sourceName, modelIndex: modelIndex ?? -1, modelLabel: labels[modelIndex ?? 0] ?? '' };
  });
  if (badTargets.length > 0)
    throw new KnobError(
      'INVALID_INPUT',
      `${where}: the class map names ${listNames(badTargets)}, which the model does not have (its labels: ${listNames(labels)})`,
    );
  if (unknown.length > 0)
    throw new KnobError(
      'INVALID_INPUT',
      `${where}: class names the model does not know: ${listNames(unknown)} (the model's labels: ${listNames(labels)}); rename them or give a class map (a file of 'source name -> model label')`,
    );
  return { rule: classMap === null ? 'by-name' : 'class-map', pairs };
}

/** One line for reports and the desk: the rule, then each pair whose names differ. */
export function describeClassMapping(mapping: ClassMapping): string {
  const renamed = mapping.pairs.filter((p) => p.sourceName !== p.modelLabel);
  const shown = renamed.slice(0, MAX_LISTED).map((p) => `${p.sourceName} -> ${p.modelLabel} (${p.modelIndex})`);
  const more = renamed.length > MAX_LISTED ? `, ... (${renamed.length} in all)` : '';
  return `${mapping.pairs.length} classes ${CLASS_MATCH_RULE_LABELS[mapping.rule]}${shown.length > 0 ? `: ${shown.join(', ')}${more}` : ', every name as the model spells it'}`;
}

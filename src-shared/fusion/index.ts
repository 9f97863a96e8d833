export * from './exp-non-positive';
export * from './logits';
export * from './convex-fusion';
export * from './temperature';
export * from './gate-target';

export * from './paper-analyses';
export * from './spearman';
export * from './analysis-text';

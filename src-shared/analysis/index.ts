export * from './paper-analyses';
export * from './spearman';

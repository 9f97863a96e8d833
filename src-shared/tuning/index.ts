export * from './tuning-objective';
export * from './tuning-search';

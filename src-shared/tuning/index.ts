export * from './tuning-objective';
export * from './tuning-search';
export * from './tuning-improvement';
export * from './tuning-grid';
export * from './knob-ranges';
export * from './fused-tables';

export * from './tuning-objective';
export * from './tuning-search';
export * from './knob-ranges';

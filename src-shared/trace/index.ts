export * from './trace';
export * from './replay';
export * from './trace-builder';
export * from './trace-scores';
export * from './frame-readout';

export * from './trace';
export * from './replay';

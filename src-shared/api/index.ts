export * from './envelope';
export * from './contract';
export * from './client';
export * from './bridge';
export * from './model-options';
export * from './frame-packet';
export * from './session-state';
export * from './correlator';

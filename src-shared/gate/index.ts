export * from './gate-settings';
export * from './gate-state';
export * from './gate-kernel';
export * from './step-coefficients';
export * from './zoh-transition';
export * from './frequency-response';
export * from './response-metrics';
export * from './step-series';

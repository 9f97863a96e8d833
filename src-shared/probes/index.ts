export * from './step-probe';
export * from './frequency-probe';

export * from './alarm-statistic';
export * from './block-bootstrap';
export * from './cusum';
export * from './false-alarm-threshold';
export * from './frame-signals';
export * from './monitor';
export * from './window-ks';
export * from './label-free-accuracy';

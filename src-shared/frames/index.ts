export * from './input-spec';
export * from './frame-to-tensor';
export * from './fit-frame';
export * from './prepare-frames';

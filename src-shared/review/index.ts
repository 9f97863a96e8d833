export * from './review-queue';
export * from './stratified-calibration-error';

export * from './corruption-table';
export * from './image';
export * from './corruptions';
export * from './schedule';

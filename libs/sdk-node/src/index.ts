export * from './analytics';
export * from './types';

export * from './app';
export * from './secrets';

export * from './config';
export * from './stores';
export * from './serve';

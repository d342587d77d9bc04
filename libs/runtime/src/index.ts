export * from './env';
export * from './config';
export * from './stores';
export * from './accounts';
export * from './serve';
export * from './main';
export * from './builder-lease';

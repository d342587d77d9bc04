export * from './key-format';
export * from './origin';
export * from './sql-port';
export * from './migrate';
export * from './key-store';
export * from './authenticator';
export * from './auth.middleware';
export * from './test-backends';

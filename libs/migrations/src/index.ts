export * from './migration';
export * from './run-migrations';

export * from './retention.routes';
export * from './app';
export * from './wiring';

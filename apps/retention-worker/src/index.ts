export * from './retention.routes';
export * from './app';

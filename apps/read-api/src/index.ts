export * from './read.routes';
export * from './app';
export * from './wiring';
export * from './live-hub';

export * from './ingest.routes';
export * from './app';
export * from './wiring';

export * from './ingest.routes';
export * from './app';

export * from './ingest.service';
export * from './request-context';

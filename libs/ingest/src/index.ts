export * from './ingest.service';
export * from './request-context';
export * from './capabilities';
export * from './import';

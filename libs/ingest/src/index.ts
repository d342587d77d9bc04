export * from './ingest.service';
export * from './request-context';
export * from './capabilities';
export * from './clock-skew';
export * from './import';
export * from './visit-state';
export * from './visits';

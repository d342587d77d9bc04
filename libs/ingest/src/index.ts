export * from './ingest.service';

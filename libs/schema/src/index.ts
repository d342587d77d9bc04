export * from './errors';
export * from './limits';
export * from './iso-date';
export * from './ingest.schema';
export * from './group-by';
export * from './read.schema';
export * from './validate';
export * from './event-columns';

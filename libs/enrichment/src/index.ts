export * from './ip-hash';
export * from './geo';
export * from './user-agent';
export * from './enrich';

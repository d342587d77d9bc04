export * from './client';
export * from './migrate';
export * from './event-writer';
export * from './event-store';
export * from './forget';

export * from './admin.routes';
export * from './app';
export * from './wiring';

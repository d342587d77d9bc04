export * from './admin.routes';
export * from './app';
export * from './wiring';
export * from './auth.routes';
export * from './orgs.routes';

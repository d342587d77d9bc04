export * from './admin.routes';
export * from './app';

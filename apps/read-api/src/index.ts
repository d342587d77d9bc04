export * from './read.routes';
export * from './app';

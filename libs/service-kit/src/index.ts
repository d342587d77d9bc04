export * from './app';
export * from './config';
export * from './logger';
export * from './rate-limiter';
export * from './errors.middleware';
export * from './redis';
export * from './redis-rate-limiter';

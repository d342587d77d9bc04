export * from './test-stores';
export { keyStoreBackends, isolatedPgPort } from '@analytics/auth';

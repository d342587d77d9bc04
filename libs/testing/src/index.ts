export * from './test-stores';
export * from './system-binary';
export { keyStoreBackends, isolatedPgPort } from '@analytics/auth';
export * from './contract-check';

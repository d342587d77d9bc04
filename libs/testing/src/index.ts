export * from './test-stores';
export * from './system-binary';
export { keyStoreBackends, isolatedPgPort } from '@analytics/auth/testing';
export * from './contract-check';

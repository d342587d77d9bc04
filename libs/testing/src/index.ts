export * from './test-stores';
export * from './system-binary';
export { keyStoreBackends, isolatedPgPort, memoryPglitePort, seedPgliteDir, systemServer, type SystemServer, type SystemServerSpec, POSTGRES, REDIS } from '@analytics/auth/testing';
export * from './contract-check';
export * from './hostile-shapes';
export * from './slow-body';
export * from './redis-clients';
export * from './oidc-provider';
export * from './smtp-capture';

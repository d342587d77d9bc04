export * from './test-stores';

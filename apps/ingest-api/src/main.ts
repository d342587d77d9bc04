import { resolve } from 'node:path';
import { loadGeo } from '@analytics/enrichment';
import { rateRulesOf, runService, sessionIdleMsOf } from '@analytics/runtime';
import { buildApp } from './app';
import { ingestApiConfig } from './config';
import { ingestWiring } from './wiring';

runService(ingestApiConfig, ({ env, logger, stores, limits }) =>
  buildApp({
    logger,
    trustProxy: env.TRUST_PROXY,
    limits,
    metricsToken: env.METRICS_TOKEN,
    ...ingestWiring(stores, { ipHashSecret: env.IP_HASH_SECRET, rateRules: rateRulesOf(env), sessionIdleMs: sessionIdleMsOf(env), logger }),
    // The browser SDK's build beside this bundle (dist/libs/sdk-browser): the proxy sends /sdk/* here.
    sdkDir: resolve(__dirname, '../../libs/sdk-browser'),
  }),
  { prepare: loadGeo },
);

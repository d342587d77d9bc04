import { runService } from '@analytics/runtime';
import { buildApp } from './app';
import { readApiConfig } from './config';
import { readWiring } from './wiring';

runService(readApiConfig, ({ env, logger, stores, limits }) => buildApp({ logger, trustProxy: env.TRUST_PROXY, limits, metricsToken: env.METRICS_TOKEN, ...readWiring(stores), live: { maxPerProject: env.LIVE_MAX_PER_PROJECT } }));

import { resolve } from 'node:path';
import { loadGeo } from '@analytics/enrichment';
import { IngestService } from '@analytics/ingest';
import { EVENT_STORE_SETTING, rateRulesOf, runService } from '@analytics/runtime';
import { buildApp } from './app';

runService('ingest-api', [EVENT_STORE_SETTING, 'DATABASE_URL', 'IP_HASH_SECRET'], ({ env, logger, stores }) =>
  buildApp({
    logger,
    trustProxy: env.TRUST_PROXY,
    authenticator: stores.authenticator,
    ingest: new IngestService({ store: stores.events, limiter: stores.limiter, rateRules: rateRulesOf(env) }),
    events: stores.events,
    ipHashSecret: env.IP_HASH_SECRET!,
    // The browser SDK's build beside this bundle (dist/libs/sdk-browser): the proxy sends /sdk/* here.
    sdkDir: resolve(__dirname, '../../libs/sdk-browser'),
  }),
  { prepare: loadGeo },
);

import { EVENT_STORE_SETTING, runService } from '@analytics/runtime';
import { buildApp } from './app';

runService('read-api', [EVENT_STORE_SETTING, 'DATABASE_URL'], ({ env, logger, stores }) =>
  buildApp({ logger, trustProxy: env.TRUST_PROXY, authenticator: stores.authenticator, events: stores.events }),
);

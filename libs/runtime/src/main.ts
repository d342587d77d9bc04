import type { Express } from 'express';
import { type Logger, createLogger, loadConfig, setBodyLimits, setFailedAuthLimits } from '@analytics/service-kit';
import { type Env, type Requirement, bodyLimitsOf, envSchema, failedAuthLimitsOf, requireSettings } from './config';
import { serve } from './serve';
import { type Stores, openStores } from './stores';

/** Runs an app's entry point: a failure to start prints its message (never a stack of secrets) and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}

export interface ServiceContext {
  env: Env;
  logger: Logger;
  stores: Stores;
}

/**
 * The entry point of an app deployed alone: config (refusing to start without `required`), logger, stores,
 * the app from `build`, then listen with graceful shutdown (stop accepting, flush the writer, close stores).
 */
export function runService(name: string, required: ReadonlyArray<Requirement>, build: (ctx: ServiceContext) => Express, options: { prepare?: () => void } = {}): void {
  runMain(async () => {
    const env = loadConfig(envSchema);
    requireSettings(env, required, name);
    const logger = createLogger({ level: env.LOG_LEVEL, name, format: env.LOG_FORMAT });
    options.prepare?.();
    const stores = await openStores(env, logger);
    const app = build({ env, logger, stores });
    setBodyLimits(app, bodyLimitsOf(env));
    setFailedAuthLimits(app, failedAuthLimitsOf(env));
    await serve(app, env.PORT, logger, () => stores.close());
  });
}

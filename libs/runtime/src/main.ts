import type { Express } from 'express';
import { type Logger, type ServiceLimits, createLogger } from '@analytics/service-kit';
import { type Env, serviceLimitsOf } from './config';
import type { AppConfig } from './env';
import { serve } from './serve';
import { type Stores, openStores } from './stores';

/** Runs an app's entry point: a failure to start prints its message (never a stack of secrets) and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}

export interface ServiceContext<E extends Env = Env> {
  env: E;
  logger: Logger;
  stores: Stores;
  /** BODY_* and AUTH_FAILURES_*, for the app factory. */
  limits: ServiceLimits;
}

/**
 * The entry point of an app deployed alone: its config (refusing to start, naming what is missing or wrong), logger,
 * stores, the app from `build` (and `background` work, such as a scheduler), then listen with graceful shutdown (stop
 * accepting, stop the background work, flush the writer, close stores).
 */
export function runService<E extends Env>(
  config: AppConfig<E>,
  build: (ctx: ServiceContext<E>) => Express,
  options: { prepare?: () => void; background?: (ctx: ServiceContext<E>) => { stop(): Promise<void> } } = {},
): void {
  runMain(async () => {
    const env = config.load();
    const logger = createLogger({ level: env.LOG_LEVEL, name: config.name, format: env.LOG_FORMAT });
    options.prepare?.();
    const stores = await openStores(env, logger);
    const ctx = { env, logger, stores, limits: serviceLimitsOf(env) };
    const app = build(ctx);
    // Work beside the routes (the retention worker's scheduler): stopped before the stores close.
    const background = options.background?.(ctx);
    await serve(app, env, logger, async () => {
      await background?.stop();
      await stores.close();
    });
  });
}

import type { Logger } from '@analytics/service-kit';
import type { Env } from './config';
import type { ScheduledJob } from './scheduler';
import type { Stores } from './stores';

/**
 * The deployment's scheduled jobs, run by the active scheduler (`npm start` in-process, the retention worker's served
 * mode): the scheduled email reports, and the alerts' evaluation.
 */
export function scheduledJobs(_stores: Stores, _env: Env, _logger: Logger): ScheduledJob[] {
  return [];
}

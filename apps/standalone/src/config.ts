import { appConfig, envSchema } from '@analytics/runtime';

/** `npm start`: nothing required; missing secrets are generated into DATA_DIR, the stores are the embedded ones. */
export const standaloneConfig = appConfig('standalone', envSchema);

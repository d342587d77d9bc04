#!/usr/bin/env node
// Rewrites the generated proxy routes of docker/nginx.conf and docker/k8s/ingress.yaml from libs/schema's route
// declarations (tools/deploy-checks/src/proxy-routes.ts renders them; the deploy checks fail while a file differs).
// Usage: npm run proxy:routes             (writes the files)
//        npm run proxy:routes -- --check  (exits 1 when a committed file is not what the declarations give)
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundleFromSource } from './bench/lib.mjs';

const check = process.argv.includes('--check');
const { lib } = await bundleFromSource('proxy-routes', ["export { proxyConfigs } from './tools/deploy-checks/src/proxy-routes';"]);
let stale = 0;
for (const { file, committed, generated } of lib.proxyConfigs(resolve('docker'))) {
  if (committed === generated) {
    console.log(`docker/${file} is current`);
    continue;
  }
  if (check) {
    stale++;
    console.log(`docker/${file} is stale: run npm run proxy:routes`);
    continue;
  }
  writeFileSync(resolve('docker', file), generated);
  console.log(`docker/${file} rewritten`);
}
process.exit(stale ? 1 : 0);

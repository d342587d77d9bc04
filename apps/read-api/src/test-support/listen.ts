import { once } from 'node:events';
import { type RequestListener, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** `handler` (an express app) on a free loopback port, for the specs that need real sockets: the server and its base URL. */
export async function listenOnLoopback(handler: RequestListener): Promise<{ server: Server; base: string }> {
  const server = createServer(handler).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

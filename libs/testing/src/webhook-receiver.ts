import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as sent. */
  body: string;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:<port> */
  url: string;
  received: ReceivedRequest[];
  /**
   * The statuses of the next answers, in order ('hang': no answer at all); once spent, 200. Every request is recorded
   * either way.
   */
  answers: Array<number | 'hang'>;
  /** A fixed status for every request to a path (before `answers`). */
  statusOf: Record<string, number>;
  /** Waits until `n` requests to `path` (any path when unset) have arrived. */
  waitFor(n: number, path?: string, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A real local HTTP receiver (webhooks, Slack) for tests: records every request, answers as told. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const answers: Array<number | 'hang'> = [];
  const statusOf: Record<string, number> = {};
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body });
      const answer = statusOf[req.url ?? '/'] ?? answers.shift() ?? 200;
      if (answer === 'hang') return;
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 400 ? 'no' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const of = (path?: string) => received.filter((r) => path === undefined || r.path === path);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    answers,
    statusOf,
    async waitFor(n, path, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (of(path).length < n) {
        if (Date.now() > deadline) throw new Error(`${of(path).length} of ${n} requests to ${path ?? 'any path'} arrived`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return of(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

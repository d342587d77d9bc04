import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWebhookReceiver } from '@analytics/testing';
import { checkedAddress } from './address-guard';
import { WEBHOOK_ANSWER_BYTES, attempt, pinned, signatureOf } from './channels';

// The webhook channel's transport: the connection goes to the address the guard checked (not to a second lookup), an
// answer is read up to 64 KB, the body is signed as sent.

describe('the webhook channel', () => {
  it('connects to the address the guard checked, whatever the name would resolve to now', async () => {
    const hooks = await startWebhookReceiver();
    try {
      const port = new URL(hooks.url).port;
      const target = await checkedAddress(`http://hooks.example.test:${port}/`, { allowPrivate: false, resolve: async () => [{ address: '93.184.216.34', family: 4 }] });
      expect(target).toEqual({ address: '93.184.216.34', family: 4 });
      // The same pinning with the receiver's own address: the request reaches it under a name no resolver knows.
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`http://hooks.example.test:${port}/pinned`, { method: 'POST', lookup: pinned({ address: '127.0.0.1', family: 4 }) }, (res) => resolve(res.statusCode ?? 0));
        req.on('error', reject);
        req.end('{}');
      });
      expect(status).toBe(200);
      expect(hooks.received.map((r) => [r.path, r.headers.host])).toEqual([['/pinned', `hooks.example.test:${port}`]]);
    } finally {
      await hooks.close();
    }
  });

  it('signs the raw body, and reads at most 64 KB of an answer', async () => {
    const TOTAL = 32 * 1024 * 1024;
    let sent = 0;
    let signature: string | undefined;
    const server = createServer((req, res) => {
      signature = req.headers['x-signature'] as string;
      req.resume();
      req.on('end', () => {
        res.writeHead(200);
        res.on('error', () => {});
        // 32 MB offered (more than loopback buffers hold); the sender stops reading past 64 KB and closes.
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const push = () => {
          while (sent < TOTAL && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', push);
          }
          res.end();
        };
        push();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big`;
      const body = JSON.stringify({ state: 'test' });
      expect(await attempt({ webhook: { url, secret: 'a-secret-of-sixteen+', body } }, { allowPrivate: true })).toEqual({ ok: true });
      expect(signature).toBe(signatureOf(body, 'a-secret-of-sixteen+'));
      await new Promise((r) => setTimeout(r, 200));
      expect(sent).toBeLessThan(TOTAL);
      expect(WEBHOOK_ANSWER_BYTES).toBe(65_536);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

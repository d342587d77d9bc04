import { request } from 'node:http';
import type { Loose } from './routes';

export interface Answer {
  status: number;
  service: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: () => Loose;
}

/**
 * A raw HTTP request (the path goes out exactly as written: no client-side dot-segment normalisation). `until`: for a
 * stream that does not end (GET /v1/live), the answer is what arrived once the body read so far satisfies it (the
 * connection is then closed).
 */
export function http(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer, until?: (body: string) => boolean): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      const answer = () => {
        const text = Buffer.concat(chunks).toString();
        return { status: res.statusCode!, service: res.headers['x-service'] as string | undefined, headers: res.headers, body: text, json: () => JSON.parse(text) };
      };
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (until && res.statusCode === 200 && until(Buffer.concat(chunks).toString())) {
          done(answer());
          req.destroy();
        }
      });
      res.on('end', () => done(answer()));
      res.on('error', () => done(answer()));
    });
    req.on('error', fail);
    req.end(body);
  });
}

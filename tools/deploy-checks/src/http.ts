import { request } from 'node:http';
import type { Loose } from './routes';

export interface Answer {
  status: number;
  service: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: () => Loose;
}

/** A raw HTTP request (the path goes out exactly as written: no client-side dot-segment normalisation). */
export function http(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        done({ status: res.statusCode!, service: res.headers['x-service'] as string | undefined, headers: res.headers, body: text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', fail);
    req.end(body);
  });
}

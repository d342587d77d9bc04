import { Writable } from 'node:stream';
import { createLogger, logFormatOf } from './logger';

function collect() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, destination };
}

describe('log format', () => {
  it.each([
    [undefined, true, 'pretty'],
    [undefined, false, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ] as const)('LOG_FORMAT=%s on a terminal=%s writes %s', (format, isTTY, expected) => {
    expect(logFormatOf(format, isTTY)).toBe(expected);
  });

  it('writes one JSON object per line with LOG_FORMAT=json, even on a terminal', () => {
    const out = collect();
    createLogger({ format: 'json', isTTY: true, name: 'standalone', destination: out.destination }).info({ port: 8080 }, 'listening');
    expect(JSON.parse(out.lines.join(''))).toMatchObject({ level: 30, name: 'standalone', port: 8080, msg: 'listening' });
  });

  it('writes human-readable lines on a terminal, still without IPs, headers or secrets', () => {
    const out = collect();
    createLogger({ isTTY: true, name: 'standalone', destination: out.destination }).info({ port: 8080, ip: '203.0.113.9', headers: { authorization: 'Bearer sk_live_x_y' }, secret: 's3cret' }, 'listening');
    // eslint-disable-next-line no-control-regex -- colour codes of the terminal output
    const text = out.lines.join('').replace(/\x1b\[[0-9;]*m/g, '');
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toMatch(/INFO.*\(standalone\).*listening/);
    expect(text).toContain('port: 8080');
    expect(text).not.toMatch(/203\.0\.113\.9|sk_live|s3cret/);
  });
});

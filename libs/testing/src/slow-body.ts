import { type Socket, connect } from 'node:net';

/** A request whose body dribbles in over a raw socket, as the slow-bodies attack sends it. */
export interface SlowBody {
  /** The status of the answer (0 until one came), its parsed body, and whether the server closed the connection. */
  readonly status: number;
  readonly body: unknown;
  readonly closed: boolean;
  /** Bytes of body sent so far. */
  readonly sent: number;
  /** Resolves when the server closed the connection (with or without an answer). */
  whenClosed: Promise<void>;
  /** Stops dribbling and destroys the socket. */
  stop(): void;
}

export interface SlowBodyOptions {
  /** The declared Content-Length (default 16 MiB, the largest body). */
  contentLength?: number;
  /** Bytes sent at once right after the headers (default 1). */
  first?: number;
  /** One more byte every `everyMs` (default 1000). */
  everyMs?: number;
  headers?: Record<string, string>;
}

/**
 * Opens `POST <path>` to `base` (http://host:port) with a Content-Length it never fulfils: `first` bytes of a JSON
 * string, then one byte every `everyMs`. The answer, if any, is parsed from the raw response.
 */
export function slowBody(base: string, path: string, key: string, options: SlowBodyOptions = {}): SlowBody {
  const { contentLength = 16 * 1024 * 1024, first = 1, everyMs = 1_000, headers = {} } = options;
  const url = new URL(base);
  const socket: Socket = connect(Number(url.port), url.hostname);
  const state = { status: 0, body: undefined as unknown, closed: false, sent: 0 };
  let received = '';
  let timer: NodeJS.Timeout | undefined;
  const send = (bytes: number) => {
    if (socket.destroyed || !socket.writable) return;
    socket.write((state.sent === 0 ? '{"a":"' : '').slice(0, bytes).padEnd(bytes, 'x'));
    state.sent += bytes;
  };
  socket.on('connect', () => {
    const lines = [`POST ${path} HTTP/1.1`, `Host: ${url.host}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', `Content-Length: ${contentLength}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    send(first);
    timer = setInterval(() => send(1), everyMs);
  });
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
    const head = /^HTTP\/1\.1 (\d{3})/.exec(received);
    if (head) state.status = Number(head[1]);
    const body = received.split('\r\n\r\n')[1];
    try {
      if (body) state.body = JSON.parse(body.replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/gi, ''));
    } catch {
      // not whole yet
    }
  });
  socket.on('error', () => undefined);
  const whenClosed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      state.closed = true;
      clearInterval(timer);
      resolve();
    }),
  );
  return {
    get status() {
      return state.status;
    },
    get body() {
      return state.body;
    },
    get closed() {
      return state.closed;
    },
    get sent() {
      return state.sent;
    },
    whenClosed,
    stop() {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

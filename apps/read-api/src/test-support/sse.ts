/** One item of an event stream as a client reads it: a message's data (parsed JSON), its event name, or a comment. */
export type SseItem = { kind: 'data'; event: string; data: unknown } | { kind: 'comment'; text: string };

/**
 * An event stream read with fetch and a body reader (as the dashboard reads it: EventSource cannot send an
 * Authorization header), parsed as the HTML standard says for these fields: `data:`, `event:`, `:` comments.
 */
export class SseReader {
  readonly items: SseItem[] = [];
  ended = false;
  private buffer = '';
  private waiters: Array<() => void> = [];

  constructor(readonly response: Response, private readonly controller: AbortController) {
    void this.pump();
  }

  static async open(url: string, key: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const controller = new AbortController();
    const response = await fetch(url, { headers: { authorization: `Bearer ${key}`, ...headers }, signal: controller.signal });
    return new SseReader(response, controller);
  }

  private async pump(): Promise<void> {
    const reader = this.response.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = this.buffer.indexOf('\n\n')) >= 0) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) this.items.push({ kind: 'comment', text: line.slice(1).trim() });
            else if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length > 0) this.items.push({ kind: 'data', event, data: JSON.parse(data.join('\n')) });
        }
        this.wake();
      }
    } catch {
      // aborted
    }
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** The messages (data items of the default event) so far. */
  messages<T>(): T[] {
    return this.items.flatMap((i) => (i.kind === 'data' && i.event === 'message' ? [i.data as T] : []));
  }

  /** Waits until `done()` holds (checked on every chunk), or fails after `timeoutMs`. */
  async until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (this.ended) throw new Error(`stream ended: ${JSON.stringify(this.items).slice(0, 500)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out: ${JSON.stringify(this.items).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.controller.abort();
  }
}

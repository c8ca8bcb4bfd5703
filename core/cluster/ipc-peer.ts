/**
 * Calls in both directions over one `node:cluster` IPC channel (docs/architecture.md, "Workers"):
 * a worker asks the primary for storage operations, the HA lock and seal changes; the primary asks
 * workers to apply other workers' changes, seal and unseal. Each call is answered once; a channel
 * that closes fails every call still waiting, so nothing hangs on a process that died.
 *
 * The channel uses Node's `advanced` serialization (structured clone), so stored values travel as
 * bytes, not as JSON.
 */
import { UnavailableError } from '../errors.js';

/** The two ends: `process` in a worker, a `cluster.Worker` in the primary. */
export interface Channel {
  /** With a callback, a channel that closed reports it there instead of as an 'error' event. */
  send(message: unknown, sendHandle: undefined, options: undefined, callback: (err: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

type Handler = (args: Record<string, unknown>) => Promise<unknown>;

interface CallMessage {
  readonly kw: 'call';
  readonly id: number;
  readonly op: string;
  readonly args: Record<string, unknown>;
}

interface ReplyMessage {
  readonly kw: 'reply';
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

export class IpcPeer {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  private readonly handlers = new Map<string, Handler>();
  private closedBecause: string | undefined;

  constructor(
    private readonly channel: Channel,
    /** Who is at the other end, for errors ("the primary process", "worker 2"). */
    private readonly other: string,
  ) {
    channel.on('message', (message) => this.receive(message));
  }

  /** Answers the other end's calls of `op`; a thrown error is sent back as its message. */
  handle(op: string, handler: Handler): void {
    this.handlers.set(op, handler);
  }

  call<T>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.closedBecause !== undefined) return Promise.reject(new UnavailableError(`${this.other} is gone (${this.closedBecause})`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      const message: CallMessage = { kw: 'call', id, op, args };
      this.channel.send(message, undefined, undefined, (err) => {
        if (!err || !this.waiting.delete(id)) return;
        reject(new UnavailableError(`${this.other} is gone (${err.message})`));
      });
    });
  }

  /** The channel is closed (the other process exited): every waiting call fails. */
  close(reason: string): void {
    this.closedBecause ??= reason;
    for (const { reject } of this.waiting.values()) reject(new UnavailableError(`${this.other} is gone (${reason})`));
    this.waiting.clear();
  }

  private receive(message: unknown): void {
    if (typeof message !== 'object' || message === null) return;
    const m = message as CallMessage | ReplyMessage;
    if (m.kw === 'reply') {
      const waiter = this.waiting.get(m.id);
      if (!waiter) return;
      this.waiting.delete(m.id);
      if (m.error !== undefined) waiter.reject(new UnavailableError(`${this.other}: ${m.error}`));
      else waiter.resolve(m.value);
    } else if (m.kw === 'call') {
      void this.answer(m);
    }
  }

  private async answer(m: CallMessage): Promise<void> {
    let reply: ReplyMessage;
    try {
      const handler = this.handlers.get(m.op);
      if (!handler) throw new Error(`no handler for ${m.op}`);
      reply = { kw: 'reply', id: m.id, value: await handler(m.args) };
    } catch (err) {
      reply = { kw: 'reply', id: m.id, error: err instanceof Error ? err.message : String(err) };
    }
    // The other end may have gone away while this call ran: nobody waits for the answer then.
    if (this.closedBecause === undefined) this.channel.send(reply, undefined, undefined, () => undefined);
  }
}

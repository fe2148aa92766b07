import { StringDecoder } from 'node:string_decoder';
import type { Deadline } from './deadline';
import { TransportError } from './transport';
import type { Dispatcher } from './undici';

/**
 * A body read whole into text as it arrives (every answer but a 2xx the caller streams), bounded: nothing
 * is copied whole more than once. A StringDecoder, unlike a TextDecoder, costs next to nothing to make.
 */
export class BodyText {
  private readonly decoder = new StringDecoder('utf8');
  private readonly pieces: string[] = [];
  private size = 0;

  /** Takes one more chunk; false (and nothing kept) once the body passes `limit` bytes. */
  add(chunk: Uint8Array, limit: number): boolean {
    this.size += chunk.byteLength;
    if (this.size > limit) return false;
    this.pieces.push(this.decoder.write(chunk));
    return true;
  }

  text(): string {
    this.pieces.push(this.decoder.end());
    return this.pieces.length === 2 ? `${this.pieces[0]}${this.pieces[1]}` : this.pieces.join('');
  }
}

/** What an exchange does to its connection: undici's dispatch controller, or node:http's (http-transport.ts). */
export type BodyController = Pick<Dispatcher.DispatchController, 'abort' | 'pause' | 'resume'>;

/** Chunks a streamed body's reader may be behind by before the transport is asked to stop reading the socket. */
const QUEUED_CHUNKS = 16;

/**
 * A streamed body's chunks for one reader: the socket is paused while the reader is behind, so memory stays
 * bounded, and the deadline while it holds a chunk. A reader that leaves early drops the connection.
 */
export class BodyQueue implements AsyncIterable<Uint8Array> {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly controller: BodyController,
    private readonly deadline: Deadline,
    private readonly limit: number,
  ) {}

  /** Takes one more chunk; false (and nothing kept) once the body passes the limit. */
  push(chunk: Uint8Array): boolean {
    this.size += chunk.byteLength;
    if (this.size > this.limit) return false;
    this.chunks.push(chunk);
    if (this.chunks.length >= QUEUED_CHUNKS) this.controller.pause();
    this.notify();
    return true;
  }

  end() {
    this.ended = true;
    this.notify();
  }

  fail(error: Error) {
    this.error ??= error;
    this.notify();
  }

  private notify() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array, void, undefined> {
    let finished = false;
    try {
      for (;;) {
        const chunk = this.chunks.shift();
        if (chunk !== undefined) {
          if (this.chunks.length === 0) this.controller.resume();
          this.deadline.pause();
          yield chunk;
          this.deadline.resume();
        } else if (this.error) throw this.error;
        else if (this.ended) {
          finished = true;
          return;
        } else await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.deadline.clear();
      if (!finished) this.controller.abort(new TransportError('network', 'not read'));
    }
  }
}

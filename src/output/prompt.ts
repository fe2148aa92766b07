import type { Readable, Writable } from 'node:stream';
import { PetinvError } from '../errors';
import type { InputStream as Terminal } from './context';

/** Reads a line from a terminal without echoing it, for an API key. */
export function readHidden(question: string, stdin: Terminal, stderr: Writable): Promise<string> {
  return new Promise((resolve, reject) => {
    let value = '';
    stderr.write(question);
    stdin.setRawMode?.(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const character of chunk) {
        if (character === '\r' || character === '\n') return finish();
        // Raw mode turns Ctrl-C into this character instead of SIGINT: it ends petinv as SIGINT would.
        if (character === '\u0003') return finish(interrupted());
        if (character === '\u007f' || character === '\b') value = value.slice(0, -1);
        else if (character >= ' ') value += character;
      }
    };
    stdin.on('data', onData);
  });
}

/** Ctrl-C at a prompt needs no words (the person pressed it, and the shell reports 130): no text, but a JSON body. */
export const interrupted = () =>
  new PetinvError('interrupted', '', { code: 'interrupted', message: 'interrupted' });

/** Asks a yes/no question on a terminal; anything but y or yes is no, and so is the end of input (Ctrl-D). */
export function confirm(question: string, stdin: Terminal, stderr: Writable): Promise<boolean> {
  return new Promise((resolve) => {
    stderr.write(`${question} [y/N] `);
    stdin.setEncoding('utf8');
    const answer = (text: string | undefined) => {
      stdin.off('data', answer);
      stdin.off('end', answer);
      stdin.pause();
      if (text === undefined) stderr.write('\n');
      resolve(text !== undefined && /^\s*y(es)?\s*$/i.test(text));
    };
    stdin.once('data', answer);
    stdin.once('end', answer);
    stdin.resume();
  });
}

/** Reads stdin to its end, or only until it passes `maxBytes`: a caller that needs little never holds much. */
export async function readAll(stdin: Readable, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    chunks.push(buffer);
    size += buffer.length;
    if (size > maxBytes) break;
  }
  return Buffer.concat(chunks).toString('utf8');
}

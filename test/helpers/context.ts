import { EventEmitter } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import type { CommandContext } from '../../src/output/context';

export interface FakeContext extends CommandContext {
  out: () => string;
  err: () => string;
}

/** A CommandContext with captured output, for running a command in-process. */
export function fakeContext(options: {
  env?: NodeJS.ProcessEnv;
  tty?: boolean;
  stdinTty?: boolean;
  stdin?: string;
  json?: boolean;
  color?: boolean;
}): FakeContext {
  const capture = (isTTY: boolean) => {
    const stream = Object.assign(new PassThrough(), { isTTY, text: '' });
    stream.on('data', (chunk) => {
      stream.text += chunk;
    });
    return stream;
  };
  const stdout = capture(options.tty ?? false);
  const stderr = capture(options.tty ?? false);
  const stdin = Object.assign(Readable.from([options.stdin ?? '']), {
    isTTY: options.stdinTty ?? false,
    setRawMode: () => {},
  });
  return {
    env: { XDG_STATE_HOME: process.env.XDG_STATE_HOME, ...options.env },
    stdin,
    stdout,
    stderr,
    json: options.json ?? false,
    color: options.color ?? false,
    signals: new EventEmitter(),
    out: () => stdout.text,
    err: () => stderr.text,
  };
}

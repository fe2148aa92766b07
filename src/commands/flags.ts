import type { OutputFlags } from '../output/choose';

/**
 * The options every command takes, as commander hands them over. Each command declares the flags it reads
 * beside its run function and turns them into the options of the room it calls: flags end at the command.
 */
export interface GlobalFlags extends OutputFlags {
  env?: string;
  baseUrl?: string;
  timeout: number;
  retries: number;
  /** Bytes. */
  maxBodySize?: number;
  /** Milliseconds. */
  maxRetryWait?: number;
  insecure?: boolean;
  headers: boolean;
  color: boolean;
  cache: boolean;
  // commander types a counted flag with a default as `number | true`.
  verbose: number | true;
}

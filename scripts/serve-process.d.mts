import type { ChildProcess, StdioNull, StdioPipe } from 'node:child_process';

export declare const PETINV_BIN: string;
export declare const isReadinessLine: (line: string) => boolean;

export interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ReadyServer {
  child: ChildProcess;
  /** The readiness line, parsed. */
  ready: Record<string, unknown>;
  exited: Promise<ProcessEnd>;
  /** Everything the process wrote to stderr so far. */
  output: () => string;
}

export declare function spawnReadyServer(
  argv: readonly string[],
  options?: { env?: NodeJS.ProcessEnv; stdout?: StdioNull | StdioPipe | 'inherit' },
): Promise<ReadyServer>;
export declare function closedPort(): Promise<number>;
export declare function temporaryDirectory(prefix?: string): string;
export declare function removeTemporaryDirectories(): void;

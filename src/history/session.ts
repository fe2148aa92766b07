import { processStartTime, procStat } from '../files/lock-record';

/**
 * The terminal session this process runs in, so that a bare `petinv undo` takes back this terminal's last
 * run, not a colleague's. On Linux the session id with its leader's start time (ids are reused);
 * elsewhere the parent process (the shell).
 */
export function terminalSession(): string {
  const session = procStat('self')?.[3];
  if (session === undefined) return `ppid:${process.ppid}`;
  // Gone with its leader, the start time is left out: the id alone.
  const started = processStartTime(Number(session));
  return `sid:${session}${started ? `@${started}` : ''}`;
}

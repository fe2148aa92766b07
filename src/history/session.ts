import { readFileSync } from 'node:fs';

/**
 * The terminal session this process runs in, so that a bare `petinv undo` takes back this terminal's last
 * run, not a colleague's. On Linux the session id with its leader's start time (ids are reused);
 * elsewhere the parent process (the shell).
 */
export function terminalSession(): string {
  try {
    const field = (pid: string | number, index: number) => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The fields after the command name, which is in parentheses and may hold spaces.
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[index] as string;
    };
    const session = field('self', 3);
    // The leader's start time (field 22, the 20th after the name); gone with its leader, the id alone.
    let started = '';
    try {
      started = `@${field(session, 19)}`;
    } catch {}
    return `sid:${session}${started}`;
  } catch {
    return `ppid:${process.ppid}`;
  }
}

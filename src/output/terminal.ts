import type { ChalkInstance } from 'chalk';

let chalkModule: typeof import('chalk') | undefined;

/**
 * chalk is always built from the edge's decision, because chalk alone ignores NO_COLOR. It is required
 * here, when first asked for, not imported: chalk detects the terminal's colours as it loads (loading
 * node:tty), which petinv never uses, and a command that prints no colour (a list into a pipe) then does
 * not pay for it. The bundle resolves the require at build time (the tests, run from the sources, use
 * Node's own require of an ES module).
 */
export function paint(color: boolean): ChalkInstance {
  chalkModule ??= require('chalk') as typeof import('chalk');
  return new chalkModule.Chalk({ level: color ? 1 : 0 });
}

/**
 * Whether stdout gets colour, decided once at the edge: --no-color and NO_COLOR win, FORCE_COLOR
 * turns it on even when piped (FORCE_COLOR=0 turns it off), otherwise only a terminal gets colour, and
 * not one that says it cannot show it (TERM=dumb: Emacs shell buffers, some CI logs).
 * chalk alone ignores NO_COLOR, so chalk is always built from this answer.
 */
export function wantsColor(env: NodeJS.ProcessEnv, stdoutIsTTY: boolean, colorFlag: boolean): boolean {
  if (!colorFlag) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return stdoutIsTTY && !isDumbTerminal(env);
}

/** TERM=dumb: a terminal without colour or cursor movement. */
export function isDumbTerminal(env: NodeJS.ProcessEnv): boolean {
  return env.TERM === 'dumb';
}

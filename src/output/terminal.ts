import type { ChalkInstance } from 'chalk';

let chalkModule: typeof import('chalk') | undefined;

/**
 * chalk, built from the edge's decision (chalk alone ignores NO_COLOR). Required when first asked for, not
 * imported: chalk loads node:tty to detect colours as it loads, which a list into a pipe need not pay for.
 */
export function paint(color: boolean): ChalkInstance {
  chalkModule ??= require('chalk') as typeof import('chalk');
  return new chalkModule.Chalk({ level: color ? 1 : 0 });
}

/**
 * Whether stdout gets colour, decided once at the edge: --no-color and NO_COLOR win, FORCE_COLOR turns it
 * on even when piped (FORCE_COLOR=0 off), else only a terminal that is not TERM=dumb (Emacs, some CI logs).
 */
export function wantsColor(env: NodeJS.ProcessEnv, stdoutIsTTY: boolean, colorFlag: boolean): boolean {
  if (!colorFlag) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return stdoutIsTTY && !isDumbTerminal(env);
}

export function isDumbTerminal(env: NodeJS.ProcessEnv): boolean {
  return env.TERM === 'dumb';
}

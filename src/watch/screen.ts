import { stripVTControlCharacters } from 'node:util';
import type { InventoryItem } from '../contract/schemas';
import { paint, statusPainter } from '../output/inventory';
import { plural } from '../output/plural';
import type { InventoryChange } from './changes';

/** The alternate screen, cursor hidden: the shell's screen comes back as it was when the watch ends. */
export const ENTER_SCREEN = '\x1b[?1049h\x1b[?25l';
export const LEAVE_SCREEN = '\x1b[?25h\x1b[?1049l';

export interface WatchScreenState {
  view: readonly InventoryItem[];
  /** Recent changes by petId, marked on screen for a while; removed pets are shown from here too. */
  marks: ReadonlyMap<bigint, InventoryChange>;
  envName: string;
  intervalMs: number;
  changedAt?: Date;
  checkedAt?: Date;
  /** Why the service cannot be reached, while it cannot. */
  lost?: string;
}

/** `14:05:09`, local time. */
const clock = (at: Date | undefined) => at?.toTimeString().slice(0, 8) ?? '—';

/** What a pet's row says about its recent change: new, its status only, or its quantity up or down. */
function changeMark(
  change: InventoryChange | undefined,
  item: InventoryItem,
  chalk: ReturnType<typeof paint>,
): string {
  if (!change) return '';
  if (change.from === null) return `  ${chalk.cyan('new')}`;
  if (change.from === item.quantity) return `  ${chalk.cyan('status changed')}`;
  return change.from < item.quantity
    ? `  ${chalk.green(`▲ was ${change.from}`)}`
    : `  ${chalk.red(`▼ was ${change.from}`)}`;
}

/**
 * One frame of `list --watch` on a terminal: the times of the last change and check, the table with each
 * change marked, pets gone, a footer; no more lines than the terminal has, each cleared to its end.
 */
export function renderWatchScreen(
  state: WatchScreenState,
  options: { color: boolean; columns: number; rows: number },
) {
  const chalk = paint(options.color);
  const paintStatus = statusPainter(options.color);
  // Short enough for 80 columns with an environment's name or a host and port: the times are not cut.
  const header = [
    chalk.bold(`list --watch · ${state.envName}`),
    `every ${state.intervalMs / 1000}s`,
    `changed ${clock(state.changedAt)}`,
    `checked ${clock(state.checkedAt)}`,
  ].join(' · ');
  const notice = state.lost
    ? chalk.red(`connection lost: ${state.lost}; still trying`)
    : state.checkedAt === undefined
      ? `waiting for the first answer from ${state.envName}… (Ctrl-C to stop)`
      : 'Ctrl-C to stop';
  const changed = state.marks;
  const removed = [...changed.values()].filter((change) => change.to === null);

  let idWidth = 'PET ID'.length;
  let quantityWidth = 'QUANTITY'.length;
  let units = 0n;
  for (const item of state.view) {
    idWidth = Math.max(idWidth, String(item.petId).length);
    quantityWidth = Math.max(quantityWidth, String(item.quantity).length);
    units += BigInt(item.quantity);
  }
  const statusWidth = 'available'.length;
  const row = (petId: bigint, status: InventoryItem['status'], quantity: string, mark: string) =>
    `${String(petId).padStart(idWidth)}  ${paintStatus(status)}${' '.repeat(statusWidth - status.length)}  ${quantity.padStart(quantityWidth)}${mark}`;
  const body = [
    ...state.view.map((item) =>
      row(item.petId, item.status, String(item.quantity), changeMark(changed.get(item.petId), item, chalk)),
    ),
    ...removed.map((change) =>
      chalk.dim(row(change.petId, change.status, '—', `  removed (was ${change.from})`)),
    ),
  ];
  // Header, notice, table header and footer take four lines; the rest is for pets.
  const room = Math.max(1, options.rows - 4);
  const shown = body.length > room ? body.slice(0, room - 1) : body;
  const more = body.length - shown.length;
  const footer = chalk.dim(
    `${plural(state.view.length, 'pet')} · ${plural(units, 'unit')}${more > 0 ? ` · ${more} more below (make the window taller, or use --limit)` : ''}`,
  );
  const table = [
    chalk.bold(
      `${'PET ID'.padStart(idWidth)}  ${'STATUS'.padEnd(statusWidth)}  ${'QUANTITY'.padStart(quantityWidth)}`,
    ),
    ...shown,
    footer,
  ];
  // Before the first answer there is no list yet: no table, and no "0 pets" that reads as an empty inventory.
  const lines = [header, notice, ...(state.checkedAt === undefined ? [] : table)];
  // Home, each line cleared past its end, and the rest of the screen cleared: a redraw without flicker.
  return `\x1b[H${lines.map((line) => fitLine(line, options.columns)).join('\x1b[K\n')}\x1b[K\x1b[J`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour sequences start with ESC
const SGR = /\x1b\[[0-9;]*m/y;

/**
 * `line` cut to `columns` visible characters, ending in `…` when cut: a wrapped line would scroll the
 * frame's header away. Colour sequences take no room; every character of a frame is one column wide.
 */
export function fitLine(line: string, columns: number): string {
  const room = Math.max(1, columns);
  if ([...stripVTControlCharacters(line)].length <= room) return line;
  let visible = 0;
  for (let at = 0; at < line.length; ) {
    SGR.lastIndex = at;
    if (SGR.test(line)) at = SGR.lastIndex;
    else if (++visible === room) return `${line.slice(0, at)}…\x1b[0m`;
    else at += (line.codePointAt(at) as number) > 0xffff ? 2 : 1;
  }
  return line;
}

import { PET_STATUSES } from '../contract/schemas';
import { shown } from './numbers';

export interface BulkEntry {
  /** 1-based line (or, in a JSON array, item) number, for messages. */
  line: number;
  petId: bigint;
  /** The quantity to set (a sheet's `quantity` or `to`). */
  quantity: number;
  /** A plan's `from`: the quantity the row was read with; the pet is written only while it still holds it. */
  from?: number;
  /** A sheet's `status`: compared with the service's, never written (the API sets quantities only). */
  status?: string;
}

export interface BulkProblem {
  line: number;
  message: string;
  /** The row's pet as written, when that much of it was read: shown only through shown(). */
  pet?: string;
}

export interface BulkInput {
  entries: EntryStore;
  problems: BulkProblem[];
  /** What the reader noticed and a person should hear once (the columns of a sheet nobody reads). */
  notices: string[];
  /** What the problems and results call a position: a sheet's row (its header is row 1), a line, a JSON item. */
  unit: 'row' | 'line' | 'item';
}

/** Where a problem is, for a person: `row 7 (pet 12)`. */
export const problemPlace = (unit: string, problem: BulkProblem) =>
  `${unit} ${problem.line}${problem.pet === undefined ? '' : ` (pet ${shown(problem.pet)})`}`;

const STATUS_CODES = new Map<string, number>(PET_STATUSES.map((status, index) => [status, index + 1]));
/** A status that is none of the contract's: it differs from whatever the service holds. */
const OTHER_STATUS = 255;
const NO_FROM = Number.NaN;

/** A run's entries in input order, in growing typed arrays, not an object each: a million cost 30 MB, not 150. */
export class EntryStore {
  private petIds = new BigInt64Array(1024);
  private quantities = new Float64Array(1024);
  private froms = new Float64Array(1024);
  private statuses = new Uint8Array(1024);
  private lines = new Uint32Array(1024);
  length = 0;
  /** A count sheet's rows left without a count, once settled: nothing is sent for them. */
  notCounted = 0;

  push(line: number, petId: bigint, quantity: number, from?: number, status?: string) {
    if (this.length === this.lines.length) {
      const grow = <T extends BigInt64Array | Float64Array | Uint32Array | Uint8Array>(array: T): T => {
        const larger = new (array.constructor as new (size: number) => T)(array.length * 2);
        larger.set(array as never);
        return larger;
      };
      this.petIds = grow(this.petIds);
      this.quantities = grow(this.quantities);
      this.froms = grow(this.froms);
      this.statuses = grow(this.statuses);
      this.lines = grow(this.lines);
    }
    this.petIds[this.length] = petId;
    this.quantities[this.length] = quantity;
    this.froms[this.length] = from ?? NO_FROM;
    this.statuses[this.length] =
      status === undefined ? 0 : (STATUS_CODES.get(status.toLowerCase()) ?? OTHER_STATUS);
    this.lines[this.length] = line;
    this.length++;
  }

  at(index: number): BulkEntry | undefined {
    if (index < 0 || index >= this.length) return undefined;
    const entry: BulkEntry = {
      line: this.lines[index] as number,
      petId: this.petIds[index] as bigint,
      quantity: this.quantities[index] as number,
    };
    const from = this.froms[index] as number;
    if (!Number.isNaN(from)) entry.from = from;
    const status = this.statuses[index] as number;
    if (status !== 0) entry.status = PET_STATUSES[status - 1] ?? 'other';
    return entry;
  }

  *[Symbol.iterator]() {
    for (let index = 0; index < this.length; index++) yield this.at(index) as BulkEntry;
  }

  /**
   * Settles the rows once all are read. A pet named twice would race with itself under concurrency: the
   * later row wins (an uncounted one too, quantity NaN: two shelves, one counted? and a refused one,
   * Infinity, reported as read), the earlier is reported; a long id named twice may be two pets a
   * spreadsheet rounded to one (numbers.ts), so none of its rows is sent. Uncounted rows then leave,
   * counted in notCounted. Sorting a copy of the petIds finds the repeated ones without a map of every pet.
   */
  settle(unit: string, problems: BulkProblem[]) {
    const sorted = this.petIds.slice(0, this.length).sort();
    const repeated = new Set<bigint>();
    for (let index = 1; index < sorted.length; index++)
      if (sorted[index] === sorted[index - 1]) repeated.add(sorted[index] as bigint);
    const winners = new Map<bigint, number>();
    const counted = new Set<bigint>();
    for (let index = this.length - 1; index >= 0 && repeated.size > 0; index--) {
      const petId = this.petIds[index] as bigint;
      if (!repeated.has(petId)) continue;
      if (!winners.has(petId)) winners.set(petId, index);
      if (!Number.isNaN(this.quantities[index])) counted.add(petId);
    }
    let kept = 0;
    for (let index = 0; index < this.length; index++) {
      const petId = this.petIds[index] as bigint;
      if (this.quantities[index] === Number.POSITIVE_INFINITY) continue;
      const winner = counted.has(petId) ? (winners.get(petId) as number) : undefined;
      const rounded = winner !== undefined && petId >= 10n ** 15n;
      if (rounded || (winner !== undefined && index !== winner)) {
        const last = this.quantities[winner as number] as number;
        problems.push({
          line: this.lines[index] as number,
          message: rounded
            ? `pet ${petId} is on more than one ${unit}: if these were two pets, a spreadsheet rounded their ids, so none of them is sent: format the column as text`
            : `pet ${petId} appears again at ${unit} ${this.lines[winner as number]}, ${Number.isFinite(last) ? 'which wins' : `${Number.isNaN(last) ? 'uncounted' : 'skipped'} there, which wins: nothing is sent for pet ${petId}`}`,
        });
        continue;
      }
      if (Number.isNaN(this.quantities[index])) {
        this.notCounted++;
        continue;
      }
      this.petIds[kept] = petId;
      this.quantities[kept] = this.quantities[index] as number;
      this.froms[kept] = this.froms[index] as number;
      this.statuses[kept] = this.statuses[index] as number;
      this.lines[kept] = this.lines[index] as number;
      kept++;
    }
    this.length = kept;
  }
}

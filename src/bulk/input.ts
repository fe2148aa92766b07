import * as z from 'zod/mini';
import { parseInventoryJson } from '../api/json';
import { describeIssues, PET_STATUSES, PetId, parsePetId } from '../api/schemas';

export interface BulkEntry {
  /** 1-based line (or, in a JSON array, item) number, for messages. */
  line: number;
  petId: bigint;
  quantity: number;
}

export interface BulkProblem {
  line: number;
  message: string;
}

export interface BulkInput {
  entries: BulkEntry[];
  problems: BulkProblem[];
  /** "line" or "item", as the problems and results call a position. */
  unit: 'line' | 'item';
}

/** One update in any of the accepted shapes; other fields (status, from `petinv list --json`) are ignored. */
const UpdateObject = z.object({
  petId: PetId,
  quantity: z
    .number({ error: 'must be an integer' })
    .check(z.refine(Number.isSafeInteger, { error: 'must be an integer' })),
});

const QUANTITY_TEXT = /^-?\d+$/;
const STATUSES = new Set<string>(PET_STATUSES);

function fromFields(fields: string[]): Omit<BulkEntry, 'line'> | string {
  // `petId quantity`, or `petId status quantity` as `petinv list` prints it piped or as CSV.
  const [petIdText, quantityText] =
    fields.length === 3 && STATUSES.has(fields[1] ?? '')
      ? [fields[0], fields[2]]
      : fields.length === 2
        ? fields
        : [];
  if (petIdText === undefined || quantityText === undefined) {
    return `expected "petId quantity", got ${fields.length} field${fields.length === 1 ? '' : 's'}`;
  }
  const petId = parsePetId(petIdText);
  if (petId === undefined) return `petId "${petIdText}" is not an integer within int64`;
  const quantity = Number(quantityText);
  if (!QUANTITY_TEXT.test(quantityText) || !Number.isSafeInteger(quantity))
    return `quantity "${quantityText}" is not an integer`;
  return { petId, quantity };
}

function fromObject(raw: unknown): Omit<BulkEntry, 'line'> | string {
  const parsed = UpdateObject.safeParse(raw);
  return parsed.success ? parsed.data : describeIssues(parsed.error);
}

/** Reads bulk updates: a JSON array, NDJSON, or lines of `petId quantity` split by whitespace, comma or tab. */
export function parseBulkInput(text: string): BulkInput {
  const entries: BulkEntry[] = [];
  const problems: BulkProblem[] = [];
  const add = (line: number, result: Omit<BulkEntry, 'line'> | string) => {
    if (typeof result === 'string') problems.push({ line, message: result });
    else entries.push({ line, ...result });
  };

  if (text.trimStart().startsWith('[')) {
    let items: unknown;
    try {
      items = parseInventoryJson(text);
    } catch (error) {
      return {
        entries,
        problems: [{ line: 1, message: `not valid JSON: ${(error as Error).message}` }],
        unit: 'item',
      };
    }
    if (!Array.isArray(items))
      return { entries, problems: [{ line: 1, message: 'expected a JSON array' }], unit: 'item' };
    items.forEach((item, index) => {
      add(index + 1, fromObject(item));
    });
    return { ...withoutDuplicates(entries, problems, 'item'), unit: 'item' };
  }

  text.split(/\r?\n/).forEach((rawLine, index) => {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) return;
    if (line.startsWith('{')) {
      try {
        add(index + 1, fromObject(parseInventoryJson(line)));
      } catch (error) {
        add(index + 1, `not valid JSON: ${(error as Error).message}`);
      }
      return;
    }
    const fields = line.split(/[\s,]+/);
    // A header such as `petinv list --csv` prints.
    if (index === 0 && fields[0]?.toLowerCase() === 'petid') return;
    add(index + 1, fromFields(fields));
  });
  return { ...withoutDuplicates(entries, problems, 'line'), unit: 'line' };
}

/** A pet named twice would race with itself under concurrency: the later entry wins, the earlier is reported. */
function withoutDuplicates(entries: BulkEntry[], problems: BulkProblem[], unit: string) {
  const last = new Map<bigint, BulkEntry>();
  for (const entry of entries) last.set(entry.petId, entry);
  const kept: BulkEntry[] = [];
  for (const entry of entries) {
    const winner = last.get(entry.petId);
    if (winner === entry) kept.push(entry);
    else
      problems.push({
        line: entry.line,
        message: `pet ${entry.petId} appears again at ${unit} ${winner?.line}, which wins`,
      });
  }
  problems.sort((a, b) => a.line - b.line);
  return { entries: kept, problems };
}

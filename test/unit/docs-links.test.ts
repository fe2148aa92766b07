import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The documents a reader follows from the front page: README.md, CONTRIBUTING.md, ARCHITECTURE.md (when
 * there is one) and every page in docs/. Each relative link must reach a file, and each #anchor a heading
 * of that file (as GitHub makes its anchors), so no page moves or heading is renamed under a link.
 */

const root = join(import.meta.dirname, '../..');
const documents = [
  'README.md',
  'CONTRIBUTING.md',
  ...(existsSync(join(root, 'ARCHITECTURE.md')) ? ['ARCHITECTURE.md'] : []),
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Markdown without its fenced code blocks, where a `#` is no heading and a bracket no link. */
const withoutFences = (markdown: string) => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

/** Markdown without its code blocks and code spans, where a bracket is no link. */
const prose = (markdown: string) => withoutFences(markdown).replace(/`+[^`\n]*`+/g, '');

/** The targets of the inline links `[text](target)` and reference definitions `[name]: target`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (match) => match[1] ?? '',
  );
  const references = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map(
    (match) => match[1] ?? '',
  );
  return [...inline, ...references];
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor of a page's headings, duplicates numbered as GitHub numbers them (`-1`, `-2`). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const match of withoutFences(markdown).matchAll(/^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

describe('the documentation links', () => {
  it('finds the pages, and links in them', () => {
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/README.md']));
    expect(linkTargets(readFileSync(join(root, 'README.md'), 'utf8')).length).toBeGreaterThan(5);
  });

  it.each(documents)(
    '%s: every relative link reaches a file, and every #anchor a heading in it',
    (document) => {
      const path = join(root, document);
      const broken: string[] = [];
      for (const target of linkTargets(readFileSync(path, 'utf8'))) {
        if (isExternal(target)) continue;
        const [file = '', anchor] = target.split('#');
        const destination = file === '' ? path : resolve(dirname(path), decodeURIComponent(file));
        if (!existsSync(destination)) {
          broken.push(`${target}: no ${relative(root, destination)}`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (statSync(destination).isDirectory() || !destination.endsWith('.md')) {
          broken.push(`${target}: an anchor into a file that is not a Markdown page`);
          continue;
        }
        if (!anchors(readFileSync(destination, 'utf8')).has(decodeURIComponent(anchor)))
          broken.push(`${target}: no heading #${anchor} in ${relative(root, destination)}`);
      }
      expect(broken).toEqual([]);
    },
  );
});

describe('the link check itself', () => {
  it('reads links as GitHub does, and not in code', () => {
    expect(linkTargets('[a](b.md) `[c](d.md)` [e](f.md#g "t")\n```\n[h](i.md)\n```\n[j]: k.md\n')).toEqual([
      'b.md',
      'f.md#g',
      'k.md',
    ]);
    expect(slug('`petinv list --watch`')).toBe('petinv-list---watch');
    expect(slug('Tracing: `-v`')).toBe('tracing--v');
    expect(slug('`petinv get <petId>`')).toBe('petinv-get-petid');
    expect([...anchors('# A\n## A\n```\n# B\n```\n')]).toEqual(['a', 'a-1']);
  });
});

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';

/**
 * The import graph of src/, read with TypeScript's own import scanner: static imports, `import type`,
 * `export ... from`, and `import()` alike, since a cycle through a type or a lazy import is still a
 * cycle in what a reader has to hold in mind. No network, no build: the sources as they are.
 */

export interface ImportEdge {
  from: string;
  to: string;
}

export interface ImportGraph {
  /** Every module under the root, as a path relative to it with forward slashes: `client/client.ts`. */
  modules: string[];
  /** Imports of another module under the root. */
  edges: ImportEdge[];
  /** Imports of packages and Node built-ins: `{ from: 'contract/schemas.ts', to: 'zod' }`. */
  packages: ImportEdge[];
}

const EXTENSIONS = ['.ts', '.d.ts', '.tsx'];

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The module a relative specifier names, or undefined when it is not a source file under the root. */
function resolveRelative(fromFile: string, specifier: string): string | undefined {
  const base = join(dirname(fromFile), specifier);
  const candidates = [
    base,
    ...EXTENSIONS.map((extension) => base + extension),
    ...EXTENSIONS.map((extension) => join(base, `index${extension}`)),
  ];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}

export function readImportGraph(root: string): ImportGraph {
  const name = (path: string) => relative(root, path).split(sep).join('/');
  const files = sourceFiles(root);
  const edges: ImportEdge[] = [];
  const packages: ImportEdge[] = [];
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (!specifier.startsWith('.')) {
        packages.push({ from: name(file), to: specifier });
        continue;
      }
      const target = resolveRelative(file, specifier);
      if (target === undefined) throw new Error(`${name(file)} imports ${specifier}, which is not a file`);
      // package.json (the version) is outside the graph: it imports nothing.
      if (!relative(root, target).startsWith('..')) edges.push({ from: name(file), to: name(target) });
    }
  }
  return { modules: files.map(name).sort(), edges, packages };
}

/** Every import cycle, as the modules of each strongly connected component (Tarjan), each cycle sorted. */
export function findCycles(graph: ImportGraph): string[][] {
  const next = new Map<string, string[]>(graph.modules.map((module) => [module, []]));
  for (const { from, to } of graph.edges) next.get(from)?.push(to);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (module: string) => {
    index.set(module, counter);
    low.set(module, counter);
    counter++;
    stack.push(module);
    onStack.add(module);
    for (const target of next.get(module) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(module, Math.min(low.get(module) as number, low.get(target) as number));
      } else if (onStack.has(target))
        low.set(module, Math.min(low.get(module) as number, index.get(target) as number));
    }
    if (low.get(module) === index.get(module)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== module);
      const selfImport = next.get(module)?.includes(module);
      if (component.length > 1 || selfImport) cycles.push(component.sort());
    }
  };
  for (const module of graph.modules) if (!index.has(module)) visit(module);
  return cycles;
}

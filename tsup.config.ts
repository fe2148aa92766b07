import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';
import { defineConfig, type Options } from 'tsup';

/**
 * A plugin that replaces one line of a bundled package's file. The build fails if the line is no longer
 * there (after an upgrade), rather than bundling something unseen.
 */
function replaceLine(name: string, file: RegExp, line: { from: string; to: string }): Plugin {
  return {
    name,
    setup(build) {
      build.onLoad({ filter: file }, async ({ path }) => {
        const source = await readFile(path, 'utf8');
        if (!source.includes(line.from))
          throw new Error(`${path} no longer has "${line.from}": see ${name} in tsup.config.ts`);
        return { contents: source.replace(line.from, line.to), loader: 'js' };
      });
    },
  };
}

/*
 * MEASURED: each plugin below stays because a measured cold start shows what it saves. Method: the CLI
 * built with all of them and built without one, `petinv list` against a local `petinv serve --in-memory`
 * (12 pets) into a pipe, each build's compiled code kept (a warm-up first), A and B in turn, 40 or 80
 * pairs on the shared 2-core machine (load average 10 to 17). Wall time there spread over 100 to 400 ms,
 * so the figures are each process's own CPU time (process.cpuUsage at exit) and the median of the paired
 * differences; wall-time medians are given where they agreed. A fourth plugin, which gave chalk a colour
 * detection that finds none (so that node:tty was not loaded), saved 0.5 ms of CPU (paired median of 80;
 * IQR -2.2 to 2.3 ms) and no wall time: it was removed.
 */

/**
 * undici's HTTP/1 client loads its HTTP/2 client, and with it node:http2, at start-up, although petinv never
 * negotiates HTTP/2 (allowH2 is off): a tenth of a cold `petinv list`'s module loading. The bundle loads it
 * when first called instead.
 * Measured 2026-11-25 (see MEASURED below): without it a cold `petinv list` loads 41 more built-in
 * modules (http2, tls, crypto) and takes 12.5 ms more CPU (paired median of 40; IQR 9.7 to 15.1 ms).
 */
const lazyHttp2 = replaceLine('petinv-lazy-undici-http2', /undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/, {
  from: "const connectH2 = require('./client-h2.js')",
  to: "const connectH2 = (...args) => require('./client-h2.js')(...args)",
});

/**
 * commander requires node:child_process at load, for executable subcommands, which petinv does not have;
 * child_process brings dgram and net's socket lists with it, about 2 ms of every cold start. The bundle
 * requires it when commander first spawns instead.
 * Measured 2026-11-25 (see MEASURED below): without it 9 more built-in modules, and 1.8 ms more CPU
 * (paired median of 80; IQR 0.1 to 3.8 ms; a first run of 40 gave 1.7 ms), 2.1 ms more wall time.
 */
const lazyCommanderChildProcess = replaceLine(
  'petinv-lazy-commander-child-process',
  /commander[\\/]lib[\\/]command\.js$/,
  {
    from: "import childProcess from 'node:child_process';",
    to: "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };",
  },
);

/**
 * commander tells a variadic option (`<file...>`) by a regular expression with `\p{ID_Continue}`, which V8
 * builds from ICU's Unicode tables for every run that declares an option: about 4 M instructions, 2% of
 * a cold `petinv list` (callgrind, Node 24, 2026-11-29). petinv's option names are ASCII, declared here,
 * never a user's: the ASCII class of word characters tells them the same.
 */
const asciiVariadicOptions = replaceLine(
  'petinv-ascii-variadic-options',
  /commander[\\/]lib[\\/]option\.js$/,
  {
    from: 'this.variadic = /\\p{ID_Continue}\\.\\.\\.[>\\]]$/u.test(flags);',
    to: 'this.variadic = /[\\w$]\\.\\.\\.[>\\]]$/.test(flags);',
  },
);

/**
 * The full undici, which only a proxied request loads (src/client/undici.ts), stays what it is on disk: a
 * dependency, loaded from node_modules when a proxy is used, rather than 700 KB parsed at every start.
 * The parts of undici a direct request uses (`undici/lib/...`) are bundled.
 * Measured 2026-11-25 (see MEASURED below): without it dist/cli.cjs grows from 1.08 MB to 1.70 MB, and a
 * cold `petinv list` takes 3.7 ms more CPU (paired median of 40; IQR 2.6 to 4.8 ms), 5.5 ms more wall time.
 */
const undiciIndexOnDisk: Plugin = {
  name: 'petinv-undici-index-on-disk',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', external: true }));
  },
};

/**
 * undici 8 carries three HTTP parsers besides the one it uses (llhttp's SIMD build): llhttp without SIMD,
 * and milo, with and without SIMD (UNDICI_USE_MILO). Each is WebAssembly in a base64 string, loaded only
 * when chosen: together 300 KB of dist/cli.cjs (1.54 MB without this) and 240 KB of dist/index.js. They
 * stay on disk, in the undici dependency, for the machine or the user that chooses them. Measured 2026-11-28
 * (Node 24, callgrind): a cold `petinv list` runs as many instructions either way; the gain is size.
 */
const unusedParsersOnDisk: Plugin = {
  name: 'petinv-unused-undici-parsers-on-disk',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/(milo\/(no-)?simd|llhttp\/llhttp-wasm)\.js$/ }, ({ path, importer }) =>
      /undici[\\/]lib[\\/]dispatcher[\\/]/.test(importer)
        ? { path: `undici/lib/${path.slice(3)}`, external: true }
        : undefined,
    );
  },
};

/**
 * The library is an ES module, and on Node 22 and later an ES module `import` of node:http reads its lazy
 * WebSocket getters, which load Node's internal undici and node:http2 (nodejs/node#57649): 30 ms of every
 * `import 'petinv'`, measured on Node 24. A `require` of node:http reads none of them, so the library
 * requires it (through the banner's createRequire) wherever its sources import it.
 */
const httpByRequire: Plugin = {
  name: 'petinv-http-by-require',
  setup(build) {
    build.onResolve({ filter: /^(node:)?http$/ }, ({ kind }) =>
      kind === 'import-statement' ? { path: 'node:http', namespace: 'petinv-http-by-require' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'petinv-http-by-require' }, () => ({
      contents: "module.exports = require('node:http');",
      loader: 'js',
    }));
  },
};

/**
 * The workbook packages write words beyond ASCII in their comments (an em dash), which esbuild keeps. Each
 * such character becomes its `\u` escape, which means the same character in a comment, a string, a regular
 * expression or a name, so the bundle stays ASCII for the launcher (see legalComments below).
 */
const workbooksInAscii: Plugin = {
  name: 'petinv-workbooks-in-ascii',
  setup(build) {
    build.onLoad({ filter: /(read|write)-excel-file[\\/].*\.js$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      const ascii = source.replace(
        /[^ -~\t\n\r]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      );
      return { contents: ascii, loader: 'js' };
    });
  },
};

/**
 * esbuild's `__toESM` gives each default import of a CommonJS module (`import fs from 'node:fs'` in env-paths,
 * chalk and petinv, commander's and cli-table3's exports) an object with a getter for every property of the
 * module, made at load: node:process alone has over a hundred, and a cold `petinv list` spent 3 to 4 M
 * instructions, 2% of it, making them (callgrind, Node 24, 2026-11-29). This one reads the same properties
 * through the prototype, the module itself, when they are read, as the getters do (a module that exports
 * no object, null or a string, is its default alone). The build fails if esbuild's helper changes shape.
 */
const namespaceByPrototype: NonNullable<Options['plugins']>[number] = {
  name: 'petinv-namespace-by-prototype',
  renderChunk(code) {
    const helper = /^var __toESM = \(mod, isNodeMode, target\) => [\s\S]*?\n\)\);\n/m;
    if (!code.includes('__toESM(')) return undefined;
    if (!helper.test(code))
      throw new Error("esbuild's __toESM changed: see namespaceByPrototype in tsup.config.ts");
    const lean =
      'var __toESM = (mod, isNodeMode) => mod !== Object(mod) ? { default: mod } : isNodeMode || !mod.__esModule ? ' +
      'Object.create(mod, { default: { value: mod, enumerable: true } }) : mod;\n';
    return { code: code.replace(helper, lean) };
  },
};

/** What both builds bundle, and how. */
const shared = {
  target: 'node22',
  platform: 'node',
  // Built-ins keep their `node:` prefix (tsup strips it by default, for Node versions before 14.18), and
  // httpByRequire below sees them.
  removeNodeProtocol: false,
  // Bundling what the commands load saves resolving and reading dozens of files at each start.
  noExternal: [
    'commander',
    '@commander-js/extra-typings',
    'chalk',
    'zod',
    'env-paths',
    'undici',
    'cli-table3',
    'csv-parse',
  ],
  sourcemap: false,
  esbuildPlugins: [
    undiciIndexOnDisk,
    unusedParsersOnDisk,
    lazyHttp2,
    lazyCommanderChildProcess,
    asciiVariadicOptions,
    workbooksInAscii,
  ],
} satisfies Options;

export default defineConfig([
  {
    ...shared,
    // The CLI is one CommonJS file. One file: Node reads, compiles and links each file of an ES module
    // graph on its own, and `petinv list` loaded about 30 chunks, a third of its start-up. CommonJS:
    // in an ES module bundle every `import` of a Node built-in is hoisted to the top and loaded at start
    // (crypto, child_process, http's server side, all for the commands that use them), where in
    // CommonJS each is required only when the module needing it first runs, and each command's modules
    // run only when it does (esbuild wraps each module that is imported dynamically).
    // launch.cjs, small, loads cli.cjs with the code V8 compiled for it last time (see src/launch.ts).
    entry: { cli: 'src/cli.ts', launch: 'src/launch.ts' },
    format: ['cjs'],
    // No import() left in the bundle: launch.ts compiles it with node:vm, where import() needs a flag or an
    // experimental loader that prints a warning (src/launch.ts). undici's full package, CommonJS, is
    // required instead.
    esbuildOptions(options) {
      options.supported = { ...options.supported, 'dynamic-import': false };
      // License comments go to cli.cjs.LEGAL.txt beside the bundle, which stays ASCII: the launcher reads
      // it as Latin-1, without decoding (src/launch.ts; test/e2e/code-cache.test.ts keeps it so).
      options.legalComments = 'linked';
    },
    splitting: false,
    plugins: [namespaceByPrototype],
    // The two builds run at once: each cleans its own files only (cli.js is what earlier builds made).
    clean: ['cli.cjs', 'launch.cjs', 'cli.js', 'conf.cjs'],
  },
  {
    ...shared,
    // The library, and manual.ts, which renders the man page and the generated sections of the docs at build
    // (scripts/docs.mjs) and is not shipped.
    entry: { index: 'src/index.ts', 'help/manual': 'src/program/manual.ts' },
    format: ['esm'],
    splitting: false,
    clean: ['index.*', 'help'],
    dts: { entry: 'src/index.ts' },
    esbuildPlugins: [...shared.esbuildPlugins, httpByRequire],
    // commander and undici are CommonJS; inside an ES module bundle their require() of node built-ins needs this.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
  },
]);

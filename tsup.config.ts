import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';

/**
 * undici's HTTP/1 client loads its HTTP/2 client, and with it node:http2, at start-up, although petinv never
 * negotiates HTTP/2 (allowH2 is off): a tenth of a cold `petinv list`'s module loading. The bundle loads it
 * when first called instead. The build fails if an undici upgrade changes the line, rather than bundling
 * something unseen.
 */
const LAZY_H2 = {
  from: "const connectH2 = require('./client-h2.js')",
  to: "const connectH2 = (...args) => require('./client-h2.js')(...args)",
};
const lazyHttp2: Plugin = {
  name: 'petinv-lazy-undici-http2',
  setup(build) {
    build.onLoad({ filter: /undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      if (!source.includes(LAZY_H2.from))
        throw new Error(`${path} no longer has "${LAZY_H2.from}": see lazyHttp2 in tsup.config.ts`);
      return { contents: source.replace(LAZY_H2.from, LAZY_H2.to), loader: 'js' };
    });
  },
};

/**
 * The full undici, which only a proxied request loads (src/api/undici.ts), stays what it is on disk: a
 * dependency, loaded from node_modules when a proxy is used, rather than 700 KB parsed at every start.
 * The parts of undici a direct request uses (`undici/lib/...`) are bundled.
 */
const undiciIndexOnDisk: Plugin = {
  name: 'petinv-undici-index-on-disk',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', external: true }));
  },
};

export default defineConfig({
  // manual.ts renders the man page and the README's help topics at build (scripts/docs.mjs); not shipped.
  entry: ['src/cli.ts', 'src/index.ts', 'src/help/manual.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  // One file per entry, no shared chunks: Node's ES module loader pays for each file it reads (a read
  // through the thread pool, a compile, a link), and `petinv list` loaded about 30 chunks, a third of its
  // start-up. A command's modules are still evaluated only when it runs (esbuild wraps each module that
  // is imported dynamically), so `petinv list` never runs the server's code, it only reads past it.
  splitting: false,
  dts: { entry: 'src/index.ts' },
  clean: true,
  // Bundling what the commands load saves resolving and reading dozens of files at each start.
  // conf stays external: it is imported dynamically, by the commands that write the config file only.
  noExternal: [
    'commander',
    '@commander-js/extra-typings',
    'chalk',
    'zod',
    'env-paths',
    'undici',
    'cli-table3',
  ],
  // commander and undici are CommonJS; inside an ES module bundle its require() of node built-ins needs this.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  sourcemap: false,
  esbuildPlugins: [undiciIndexOnDisk, lazyHttp2],
});

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

export default defineConfig({
  // manual.ts renders the man page and the README's help topics at build (scripts/docs.mjs); not shipped.
  entry: ['src/cli.ts', 'src/index.ts', 'src/help/manual.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  // Splitting keeps each command in its own chunk, so `petinv list` never loads the server.
  splitting: true,
  dts: { entry: 'src/index.ts' },
  clean: true,
  // Bundling what every command loads saves resolving and reading dozens of files at each start.
  // conf and cli-table3 stay external: only a few commands load them.
  noExternal: ['commander', '@commander-js/extra-typings', 'chalk', 'zod', 'env-paths', 'undici'],
  // commander and undici are CommonJS; inside an ES module bundle its require() of node built-ins needs this.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  sourcemap: false,
  esbuildPlugins: [lazyHttp2],
});

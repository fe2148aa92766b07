import { defineConfig } from 'tsup';

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
});

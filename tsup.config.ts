import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/cli.ts', 'src/index.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  // Splitting keeps each command in its own chunk, so `petinv list` never loads the server.
  splitting: true,
  dts: { entry: 'src/index.ts' },
  clean: true,
  sourcemap: false,
});

#!/usr/bin/env node
// The package's bin is bin/petinv.cjs (a CommonJS entry starts about 4 ms sooner); this one stays for
// scripts and tools that run bin/petinv.js by its path, as the first versions were run.
import { createRequire } from 'node:module';

createRequire(import.meta.url)('./petinv.cjs');

// npm run check:package: the package as a user gets it. Packs petinv (prepack builds it once), installs
// the tarball globally into a temporary prefix, and fails on any npm warning that names petinv or its
// install, on a petinv that does not run, or on a man page npm did not link. Too slow for the test suite
// (a build and a registry install), so it runs on its own, before a release.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'petinv-package-'));
const npm = (args, options = {}) =>
  spawnSync('npm', args, { cwd: root, encoding: 'utf8', env: { ...process.env, ...options.env } });
const problems = [];
try {
  const packed = npm(['pack', '--pack-destination', work, '--json']);
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
  // prepack's build prints before npm's JSON, which starts on a line of its own.
  const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m)));
  const shipped = files.map((file) => file.path);
  for (const expected of [
    'LICENSE',
    'README.md',
    'docs/guide.md',
    'bin/petinv.cjs',
    'dist/cli.cjs',
    'dist/launch.cjs',
    'dist/index.d.ts',
    'man/petinv.1',
  ])
    if (!shipped.includes(expected)) problems.push(`the tarball lacks ${expected}`);
  for (const path of shipped) if (path.startsWith('dist/help/')) problems.push(`the tarball ships ${path}`);
  // The pages shipped link to each other: an installed copy has every page a link names.
  for (const page of shipped.filter((path) => path.endsWith('.md'))) {
    const text = readFileSync(join(root, page), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const linked = posix.normalize(posix.join(posix.dirname(page), target));
      if (!shipped.includes(linked) && !shipped.some((path) => path.startsWith(`${linked}/`)))
        problems.push(`${page} links to ${target}, which the tarball lacks`);
    }
  }

  const prefix = join(work, 'prefix');
  const installed = npm(['install', '-g', '--prefix', prefix, join(work, filename)], {
    env: { npm_config_loglevel: 'warn' },
  });
  if (installed.status !== 0) throw new Error(`npm install -g failed:\n${installed.stderr}`);
  // This machine's own npm configuration may warn about itself ("Unknown user config"); that is not petinv's.
  const warnings = installed.stderr
    .split('\n')
    .filter((line) => /\bwarn\b/i.test(line) && !/Unknown (user|project|global|env) config/.test(line));
  for (const warning of warnings) problems.push(`npm install -g warned: ${warning}`);

  const petinv = join(prefix, 'bin', 'petinv');
  const version = execFileSync(petinv, ['--version'], { encoding: 'utf8' }).trim();
  console.log(`installed ${filename}: petinv --version says ${version}`);
  const man = spawnSync('man', ['-w', 'petinv'], {
    encoding: 'utf8',
    env: { ...process.env, MANPATH: join(prefix, 'share', 'man') },
  });
  if (man.error) console.log('man is not installed here: the man page link was not checked');
  else if (man.status !== 0) problems.push(`man petinv finds no page under ${prefix}/share/man`);
  else console.log(`man petinv: ${man.stdout.trim()}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
for (const problem of problems) console.error(`check:package: ${problem}`);
if (problems.length === 0) console.log('check:package: the package installs cleanly');
process.exitCode = problems.length === 0 ? 0 : 1;

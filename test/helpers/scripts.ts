import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The suite runs compiled (scripts/test.js builds src and test into .build/run-<pid> once, because loading every
 * module through tsx's hooks cost each process about 2 s of CPU); a file run alone with
 * `node --import tsx --test` runs from source. A Roost process a test starts runs the same way as the
 * test itself, so it tests the code the test was built with.
 */
const compiled = import.meta.url.endsWith('.js');
/** Where this run's compiled src is, from the checkout's root (the working directory). */
const compiledSrc = relative(process.cwd(), fileURLToPath(new URL('../../src', import.meta.url)));

/** Node's arguments that run Roost's entry point `name` (src/main.ts, src/cli.ts) of the checkout at `root`. */
export function roostScript(name: 'main' | 'cli', root = '.'): string[] {
  return compiled ? [join(root, compiledSrc, `${name}.js`)] : ['--import', 'tsx', join(root, 'src', `${name}.ts`)];
}

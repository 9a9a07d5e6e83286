#!/usr/bin/env node
// The `roost` command. Runs the compiled build; from a checkout without one, runs the sources through tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
let cli;
if (existsSync(built)) {
  cli = await import(built);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import('../src/cli.ts');
}
const code = await cli.runCli(process.argv.slice(2));
if (code >= 0) process.exit(code);

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A package loaded when first asked for, not when this module is. Importing sharp, ioredis, nodemailer,
 * jose and peggy cost a process ~0.45 s of CPU at start together (measured one by one, 2 cores), paid by
 * every node, every `roost` command and every test file, though most never make a thumbnail, reach Redis,
 * send mail, check an Apple token or parse CQL. Only for packages that load as CommonJS (synchronously).
 */
export function onFirstUse<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}

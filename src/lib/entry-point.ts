import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Whether the module at `moduleUrl` is the script node was started with. Both sides are resolved
 * to real paths: node runs a script reached through a symlink (`/srv/app/current/dist/main.js`,
 * the usual release layout) under its real path, while process.argv[1] keeps the link.
 */
export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(fileURLToPath(moduleUrl)) === realpathSync(script);
  } catch {
    return false;
  }
}

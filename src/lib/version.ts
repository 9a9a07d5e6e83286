import { readFileSync } from 'node:fs';

/**
 * Roost's version, from package.json (one source for `roost --version`, /health/live and the logs).
 * Read relative to this file, so it holds from src/ under tsx and from dist/ once built.
 */
export const version: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

// The floor rows of bench/objects.ts: for each store, a bare Fastify route doing what any server must do for
// get-by-id and for the `where` page (bench/floor-server.js: the same driver, the page's own SQL, no Roost), so the
// page's target (≥ 50% of get-by-id) can be read against what the host allows: the floor's own ratio.
import { join } from 'node:path';
import { benchDir, freePort, percent, startServer, type ServerProcess } from './lib.ts';

/** Starts the floor over the class Roost serves from `store`, and checks its page is Roost's (the same objects). */
export async function startFloor(
  label: string,
  store: { databaseUrl?: string; sqlitePath?: string },
  target: { url: string; appId: string; appKey: string; className: string },
  /** The page both must answer alike (Roost's query, the floor's path): the `where` page unless given. */
  check: { query: string; floorPath: string } = { query: `where=${encodeURIComponent('{"group":7}')}&limit=20`, floorPath: '/floor/where/7' },
): Promise<ServerProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), FLOOR_APP: target.appId, FLOOR_CLASS: target.className };
  if (store.databaseUrl) env.FLOOR_PG = store.databaseUrl;
  else env.FLOOR_SQLITE = store.sqlitePath;
  const floor = await startServer({ name: `floor ${label}`, command: process.execPath, args: [join(benchDir, 'floor-server.js')], env, port, healthPath: '/floor/health' });
  const roost = await fetch(`${target.url}/1.1/classes/${target.className}?${check.query}`, { headers: { 'x-lc-id': target.appId, 'x-lc-key': target.appKey } });
  const bare = await fetch(`${floor.url}${check.floorPath}`);
  const [roostText, bareText] = [await roost.text(), await bare.text()];
  const same = sameValues(roostText, bareText);
  if (!same || JSON.parse(bareText).results.length !== 20) {
    await floor.stop();
    throw new Error(`floor ${label}: its page is not Roost's:\n${bareText.slice(0, 400)}\n${roostText.slice(0, 400)}`);
  }
  return floor;
}

/**
 * Whether two answers hold the same values, keys in any order: the floor sends the stored text (jsonb's, spaced and
 * sorted, on PostgreSQL) where Roost sends its keys in the hosted order (docs/compatibility.md "Key order").
 */
export function sameValues(a: string, b: string): boolean {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(sorted)
    : value !== null && typeof value === 'object' ? Object.fromEntries(Object.entries(value).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, v]) => [k, sorted(v)]))
    : value;
  return JSON.stringify(sorted(JSON.parse(a))) === JSON.stringify(sorted(JSON.parse(b)));
}

/** A row's figures: req/s (median) and the server's CPU µs a request (median). */
export interface FloorFigures {
  rps: number;
  cpu: number;
}

/**
 * The floor's line: its where ÷ its get-by-id beside Roost's, by req/s and by the server's CPU a request (the steadier
 * of the two on a host whose speed moves between rows), and what Roost costs a request against the floor.
 */
export function floorLine(label: string, f: { get: FloorFigures; where: FloorFigures; floorGet: FloorFigures; floorWhere: FloorFigures }): string {
  const share = (a: FloorFigures, b: FloorFigures) => `${percent(a.rps / b.rps)} by req/s, ${percent(b.cpu / a.cpu)} by CPU a request`;
  return `- ${label}: floor where ÷ floor get-by-id ${share(f.floorWhere, f.floorGet)}; Roost's where ÷ get-by-id ${share(f.where, f.get)}; ` +
    `Roost's CPU a request ${(f.get.cpu / f.floorGet.cpu).toFixed(2)}× the floor's (get-by-id), ${(f.where.cpu / f.floorWhere.cpu).toFixed(2)}× (where)`;
}

// How long building a declared index holds SQLite's write lock (issue #14, "Indexes that users control"):
// SQLite has no concurrent build, so the build is one write transaction, and with the synchronous driver
// the building process answers nothing meanwhile. Measures, on a class of BENCH_OBJECTS objects (default
// 100,000), the time from POST-equivalent (store create) to ready, and the longest stall of this
// process's event loop during it (a timer every 5 ms), for a number field and a string field.
// Run: npm run bench:index-build
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { openSqliteStore } from '../src/storage/sqlite/open.ts';
import { envNumber, log } from './lib.ts';

const count = envNumber('BENCH_OBJECTS', 100_000);
const dir = mkdtempSync(join(tmpdir(), 'roost-index-build-'));
const store = await openSqliteStore({ path: join(dir, 'roost.db') });
try {
  const db = (store as unknown as { db: Kysely<any> }).db;
  const started = Date.now();
  await sql`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${count})
    INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
    SELECT 'bench', 'Big', printf('%024x', i), i, i,
      json_object('score', abs(random()) % 1000000, 'name', hex(randomblob(8)), 'owner', json_object('name', 'o' || (i % 97)),
        'tags', json_array('t' || (i % 7), 't' || (i % 11)), 'text', hex(randomblob(40))), '["*"]' FROM s`.execute(db);
  log(`${count} objects in ${Date.now() - started} ms`);
  for (const [name, field] of [['byScore', 'score'], ['byName', 'name']] as const) {
    let longestStall = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      longestStall = Math.max(longestStall, now - last);
      last = now;
    }, 5);
    const begun = performance.now();
    await store.classIndexes.create('bench', 'Big', { name, keys: [{ path: [field], descending: false }], unique: false });
    await store.classIndexes.idle();
    const took = performance.now() - begun;
    clearInterval(probe);
    // The stall the build ended (the timer had no turn to see it).
    longestStall = Math.max(longestStall, performance.now() - last);
    const [index] = (await store.classIndexes.list('bench', 'Big')).filter((found) => found.name === name);
    log(`${name} (${field}): ${index.state} after ${took.toFixed(0)} ms; longest event-loop stall ${longestStall.toFixed(0)} ms`);
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

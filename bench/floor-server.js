// The floor of bench/objects.ts: a bare Fastify route doing what any server must do for get-by-id and for the
// `where` page, with the same driver as Roost and none of Roost (no auth, no where parse, no hooks, no metrics):
// one prepared statement on the class Roost serves, its rows' stored JSON spliced with the id and ISO dates,
// answered as JSON. The page's statement is the SQL Roost sends for `{"group":<n>}`, limit 20 (the union of
// the equality's two index sides, read as stored; on PostgreSQL with its scope written in, named), run alone
// for each request: no batching. The include page (bench/include.ts) is that page, then one statement reading the
// (class, id) pairs its roots point at by `author` and `category` (the level's SQL Roost sends), each pointer's text in
// the root replaced by its object's (the object's JSON with id, dates, `__type` and `className`); on
// PostgreSQL also in one statement (/floor/include1: the same page, each root's two pointers read by lateral
// primary-key probes with the level's readers' check), to show what a plan without the level's round trip allows. The $inQuery page
// (bench/subqueries.ts) is the statement Roost sends for `{"post":{"$inQuery":{"className":FLOOR_INNER,
// "where":{"category":<n>}}}}`, limit 20, its rows answered as the where page's. On PostgreSQL the rows' data go as jsonb's text (a space after each `:` and `,`),
// which Roost rewrites as JSON.stringify's; the floor skips that. Env: PORT, FLOOR_APP, FLOOR_CLASS, and
// FLOOR_SQLITE (a file) or FLOOR_PG (a URL).
import Fastify from 'fastify';

const app = process.env.FLOOR_APP;
const className = process.env.FLOOR_CLASS;
const quote = (text) => `'${text.replace(/'/g, "''")}'`;

/** A stored row's JSON text with its id and dates, as Roost answers it (fields first, then the three). */
function objectJson(id, created, updated, data) {
  const tail = `"objectId":"${id}","createdAt":"${new Date(Number(created)).toISOString()}","updatedAt":"${new Date(Number(updated)).toISOString()}"}`;
  return data.length > 2 ? `${data.slice(0, -1)},${tail}` : `{${tail}`;
}

function sqliteFloor(path) {
  // Loaded here: a PostgreSQL floor needs no SQLite binding, and the reverse.
  return import('better-sqlite3').then(({ default: Database }) => {
    const db = new Database(path, { readonly: true });
    db.pragma('mmap_size = 2147418112');
    const byId = db.prepare('SELECT o.created_at, o.updated_at, o.data FROM objects o WHERE o.app_id = ? AND o.class_name = ? AND o.id = ? AND (instr(o.readers, ?) > 0)').raw(true);
    const page = db.prepare(`SELECT o.id, o.created_at, o.updated_at, o.data AS data FROM (SELECT * FROM (SELECT o.id, o.created_at, o.updated_at, o.data FROM objects o
    WHERE o.app_id = +? AND o.class_name = +? AND (json_extract(o.data, '$."group"') = ? AND (? NOT IN (0, 1) OR json_type(o.data, '$."group"') IN ('integer', 'real'))) AND 1=1 AND (instr(o.readers, ?) > 0) ORDER BY o.created_at ASC, o.id ASC LIMIT 20) a UNION ALL SELECT * FROM (SELECT o.id, o.created_at, o.updated_at, o.data FROM (SELECT rowid AS r FROM objects WHERE app_id = +? AND class_name = +?
      AND json_extract(data, '$."group"') >= '[' AND json_extract(data, '$."group"') < '\\') arrays CROSS JOIN objects o ON o.rowid = arrays.r
    WHERE o.app_id = +? AND o.class_name = +? AND (json_type(o.data, '$."group"') = 'array' AND EXISTS (SELECT 1 FROM json_each(o.data, '$."group"') e WHERE (e.type IN ('integer', 'real') AND e.value IN (SELECT value FROM json_each(?))))) AND 1=1 AND (instr(o.readers, ?) > 0) ORDER BY o.created_at ASC, o.id ASC LIMIT 20) b) o
    ORDER BY o.created_at ASC, o.id ASC LIMIT 20 OFFSET 0`).raw(true);
    const level = db.prepare(`SELECT o.id, o.created_at, o.updated_at, o.data AS data, o.class_name AS class_name FROM (SELECT value AS v, key AS v2 FROM json_each(?)) AS t
      CROSS JOIN objects o WHERE o.app_id = ? AND o.class_name = t.v AND o.id = t.v2 AND (instr(o.readers, ?) > 0)`).raw(true);
    const inner = process.env.FLOOR_INNER ?? 'SqbPost';
    const side = (condition) => `SELECT o.id, o.created_at, o.id AS v FROM ${condition} AND 1=1 AND (instr(o.readers, ?) > 0) ORDER BY o.created_at ASC, o.id ASC LIMIT 100`;
    const inQuery = db.prepare(`SELECT o.id, o.created_at, o.updated_at, o.data AS data FROM (SELECT o.rowid AS k FROM (SELECT s.v FROM (SELECT * FROM (SELECT * FROM (${side(`objects o
    WHERE o.app_id = +? AND o.class_name = +? AND (json_extract(o.data, '$."category"') = ? AND (? NOT IN (0, 1) OR EXISTS (SELECT 1 FROM objects t WHERE t.rowid = o.rowid AND json_type(t.data, '$."category"') IN ('integer', 'real'))))`)}) a UNION ALL SELECT * FROM (${side(`(SELECT rowid AS r FROM objects WHERE app_id = +? AND class_name = +?
      AND json_extract(data, '$."category"') >= '[' AND json_extract(data, '$."category"') < '\\') arrays CROSS JOIN objects o ON o.rowid = arrays.r
    WHERE o.app_id = +? AND o.class_name = +? AND (json_type(o.data, '$."category"') = 'array' AND EXISTS (SELECT 1 FROM json_each(o.data, '$."category"') e WHERE (e.type IN ('integer', 'real') AND e.value IN (SELECT value FROM json_each(?)))))`)}) b) o
    ORDER BY o.created_at ASC, o.id ASC LIMIT 100 OFFSET 0) s) i CROSS JOIN objects o ON o.app_id = +? AND o.class_name = +?
        AND json_extract(o.data, '$."post"."objectId"') = +i.v
    WHERE o.app_id = +? AND o.class_name = +? AND coalesce(json_extract(o.data, '$."post"."className"') = ?, 0) AND 1=1 AND (instr(o.readers, ?) > 0) ORDER BY o.created_at ASC, o.id ASC LIMIT 20 OFFSET 0) p CROSS JOIN objects o ON o.rowid = p.k ORDER BY o.created_at ASC, o.id ASC`).raw(true);
    return {
      inQuery: async (category) =>
        inQuery.all(app, inner, category, category, '"*"', app, inner, app, inner, `[${category}]`, '"*"', app, className, app, className, inner, '"*"'),
      pointerText: (ref) => JSON.stringify(ref),
      level: async (refs) => level.all(JSON.stringify(Object.fromEntries(refs.map((ref) => [ref.objectId, ref.className]))), app, '"*"'),
      get: async (id) => byId.get(app, className, id, '"*"'),
      page: async (group) => page.all(app, className, group, group, '"*"', app, className, app, className, `[${group}]`, '"*"'),
    };
  });
}

function postgresFloor(url) {
  return import('pg').then(({ default: pg }) => {
    const types = { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) };
    const pool = new pg.Pool({ connectionString: url, max: 10, types, options: '-c jit=off' });
    const scope = `o.app_id = ${quote(app)} AND o.class_name = ${quote(className)}`;
    const side = (condition) => `SELECT o.id, o.created_at, o.updated_at, o.data FROM objects o
    WHERE ${scope} AND ${condition} AND 1=1 AND o.readers && '{*}'::text[] ORDER BY o.created_at ASC, o.id ASC LIMIT 20`;
    const path = `(o.data #> '{"group"}'::text[])`;
    const pageText = `SELECT o.id, o.created_at, o.updated_at, o.data::text AS data FROM (SELECT * FROM (${side(`${path} = $1::jsonb`)}) a UNION ALL SELECT * FROM (${side(
      `(${path} > 'true'::jsonb AND ${path} < '{}'::jsonb AND o.data @> $2::jsonb)`,
    )}) b) o
    ORDER BY o.created_at ASC, o.id ASC LIMIT 20 OFFSET 0`;
    const byIdText = `SELECT o.created_at, o.updated_at, o.data::text FROM objects o WHERE ${scope} AND o.id = $1 AND o.readers && '{*}'::text[]`;
    const levelText = `SELECT o.id, o.created_at, o.updated_at, o.data::text AS data, o.class_name FROM unnest($1::text[], $2::text[]) AS t(v, v2)
      CROSS JOIN objects o WHERE o.app_id = ${quote(app)} AND o.class_name = t.v AND o.id = t.v2 AND o.readers && '{*}'::text[]`;
    const inner = process.env.FLOOR_INNER ?? 'SqbPost';
    const innerScope = `o.app_id = ${quote(app)} AND o.class_name = ${quote(inner)}`;
    const innerSide = (condition) => `SELECT o.id, o.created_at, o.id AS v FROM objects o
    WHERE ${innerScope} AND ${condition} AND 1=1 AND o.readers && '{*}'::text[] ORDER BY o.created_at ASC, o.id ASC LIMIT 100`;
    const categoryPath = `(o.data #> '{"category"}'::text[])`;
    const inQueryText = `SELECT o.id, o.created_at, o.updated_at, o.data::text AS data FROM (SELECT s.v FROM (SELECT * FROM (SELECT * FROM (${innerSide(`${categoryPath} = $1::jsonb`)}) a UNION ALL SELECT * FROM (${innerSide(
      `(${categoryPath} > 'true'::jsonb AND ${categoryPath} < '{}'::jsonb AND o.data @> $2::jsonb)`,
    )}) b) o
    ORDER BY o.created_at ASC, o.id ASC LIMIT 100 OFFSET 0) s) i(v) CROSS JOIN LATERAL (SELECT * FROM objects m WHERE m.app_id = ${quote(app)}
        AND m.class_name = ${quote(className)} AND (m.data #> '{"post","objectId"}'::text[]) = to_jsonb(i.v) OFFSET 0) o
    WHERE ${scope} AND coalesce((o.data #> '{"post","className"}'::text[]) = $3::jsonb, false) AND 1=1 AND o.readers && '{*}'::text[] ORDER BY o.created_at ASC, o.id ASC LIMIT 20 OFFSET 0`;
    // The include page in one statement: the page, then each root's `author` and `category` read by a lateral
    // probe of the primary key with the same readers' check as the level's (no second round trip, no batch).
    const pointed = (field, alias) => `LEFT JOIN LATERAL (SELECT x.id, x.created_at, x.updated_at, x.data::text AS data FROM objects x
      WHERE x.app_id = ${quote(app)} AND x.class_name = (p.data #>> '{${field},className}') AND x.id = (p.data #>> '{${field},objectId}')
      AND p.data #>> '{${field},__type}' = 'Pointer' AND x.readers && '{*}'::text[]) ${alias} ON true`;
    const joinedText = `SELECT p.id, p.created_at, p.updated_at, p.data::text, a.id, a.created_at, a.updated_at, a.data, c.id, c.created_at, c.updated_at, c.data
      FROM (SELECT * FROM (${side(`${path} = $1::jsonb`)}) a UNION ALL SELECT * FROM (${side(`(${path} > 'true'::jsonb AND ${path} < '{}'::jsonb AND o.data @> $2::jsonb)`)}) b
      ORDER BY created_at ASC, id ASC LIMIT 20 OFFSET 0) p ${pointed('author', 'a')} ${pointed('category', 'c')} ORDER BY p.created_at ASC, p.id ASC`;
    return {
      joined: async (group) => (await pool.query({ name: 'floor_joined', text: joinedText, values: [String(group), `{"group":[${group}]}`], rowMode: 'array' })).rows,
      inQuery: async (category) =>
        (await pool.query({ name: 'floor_inquery', text: inQueryText, values: [String(category), `{"category":[${category}]}`, JSON.stringify(inner)], rowMode: 'array' })).rows,
      // jsonb's text of a pointer: its keys by length, a space after each colon and comma.
      pointerText: (ref) => `{"__type": "Pointer", "objectId": ${JSON.stringify(ref.objectId)}, "className": ${JSON.stringify(ref.className)}}`,
      level: async (refs) => (await pool.query({ name: 'floor_level', text: levelText, values: [refs.map((r) => r.className), refs.map((r) => r.objectId)], rowMode: 'array' })).rows,
      get: async (id) => (await pool.query({ name: 'floor_get', text: byIdText, values: [id], rowMode: 'array' })).rows[0],
      page: async (group) => (await pool.query({ name: 'floor_page', text: pageText, values: [String(group), `{"group":[${group}]}`], rowMode: 'array' })).rows,
    };
  });
}

const floor = await (process.env.FLOOR_SQLITE ? sqliteFloor(process.env.FLOOR_SQLITE) : postgresFloor(process.env.FLOOR_PG));
const server = Fastify({ logger: false });
server.get('/floor/health', async () => ({ ok: true }));
server.get('/floor/get/:id', async (request, reply) => {
  const row = await floor.get(request.params.id);
  if (!row) return reply.code(404).send({ code: 101, error: 'Object not found.' });
  return reply.type('application/json; charset=utf-8').send(objectJson(request.params.id, row[0], row[1], row[2]));
});
server.get('/floor/where/:group', async (request, reply) => {
  const rows = await floor.page(Number(request.params.group));
  return reply.type('application/json; charset=utf-8').send(`{"results":[${rows.map((r) => objectJson(r[0], r[1], r[2], r[3])).join(',')}]}`);
});
server.get('/floor/inquery/:category', async (request, reply) => {
  const rows = await floor.inQuery(Number(request.params.category));
  return reply.type('application/json; charset=utf-8').send(`{"results":[${rows.map((r) => objectJson(r[0], r[1], r[2], r[3])).join(',')}]}`);
});
/** The include page: the roots' pointers (author, category) read in one statement, each pointer's text replaced by its object's. */
server.get('/floor/include/:group', async (request, reply) => {
  const rows = await floor.page(Number(request.params.group));
  const key = (ref) => `${ref.className}/${ref.objectId}`;
  const pointers = rows.map((row) => {
    const data = JSON.parse(row[3]);
    return [data.author, data.category];
  });
  const refs = new Map(pointers.flat().map((ref) => [key(ref), ref]));
  const texts = new Map();
  for (const [id, created, updated, data, refClass] of await floor.level([...refs.values()])) {
    texts.set(`${refClass}/${id}`, `${objectJson(id, created, updated, data).slice(0, -1)},"__type":"Pointer","className":${JSON.stringify(refClass)}}`);
  }
  const results = rows.map((row, i) => {
    let data = row[3];
    for (const ref of pointers[i]) {
      const text = texts.get(key(ref));
      if (text) data = data.replace(floor.pointerText({ __type: "Pointer", className: ref.className, objectId: ref.objectId }), () => text);
    }
    return objectJson(row[0], row[1], row[2], data);
  });
  return reply.type('application/json; charset=utf-8').send(`{"results":[${results.join(',')}]}`);
});
/** The include page from one statement (PostgreSQL): each root's row carries its author's and category's rows. */
server.get('/floor/include1/:group', async (request, reply) => {
  const included = (id, created, updated, data, refClass) => `${objectJson(id, created, updated, data).slice(0, -1)},"__type":"Pointer","className":${JSON.stringify(refClass)}}`;
  const results = (await floor.joined(Number(request.params.group))).map((row) => {
    const pointers = JSON.parse(row[3]);
    let data = row[3];
    for (const [field, at] of [['author', 4], ['category', 8]]) {
      const ref = pointers[field];
      if (row[at] !== null) data = data.replace(floor.pointerText(ref), () => included(row[at], row[at + 1], row[at + 2], row[at + 3], ref.className));
    }
    return objectJson(row[0], row[1], row[2], data);
  });
  return reply.type('application/json; charset=utf-8').send(`{"results":[${results.join(',')}]}`);
});
await server.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 3998) });
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));

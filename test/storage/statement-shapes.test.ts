// The pages the benchmarks read (an equality, a range with its order, an $in, an $inQuery, $relatedTo) are
// learnt as shapes on both dialects: a later page of the shape is not built again, and its statement is the one
// built afresh. Guards the fast path against turning itself off unseen (a dialect change whose parameters no
// recipe makes leaves every page built afresh, correct but slower: bench/RESULTS.md, Objects).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type CompiledQuery } from 'kysely';
import { parseWhere } from '../../src/objects/query.ts';
import { objectJsonColumns, objectJsonSelect } from '../../src/storage/sql/object-row.ts';
import { pageShape, pageWithValues, type PageShapeQuery } from '../../src/storage/sql/page-shapes.ts';
import { StatementShapes } from '../../src/storage/sql/statement-shapes.ts';
import { pageStatement } from '../../src/storage/sql/where.ts';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';

const dialects = [
  { dialect: sqliteDialect, db: new Kysely<any>({ dialect: { createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new SqliteIntrospector(db), createQueryCompiler: () => new SqliteQueryCompiler() } }) },
  { dialect: postgresDialect, db: new Kysely<any>({ dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() } }) },
];

const pages: Array<{ name: string; wheres: unknown[]; order?: string[] }> = [
  { name: 'equality', wheres: [{ group: 1 }, { group: 42 }, { group: 7.5 }] },
  { name: 'string equality', wheres: [{ group: 'a' }, { group: 'it\'s "b"' }] },
  { name: 'range with its order', wheres: [{ score: { $gte: 10 } }, { score: { $gte: 99_999 } }], order: ['score'] },
  { name: '$in', wheres: [{ group: { $in: [1, 2] } }, { group: { $in: [5, 6] } }] },
  { name: '$inQuery', wheres: [{ author: { $inQuery: { className: 'Author', where: { rank: 1 } } } }, { author: { $inQuery: { className: 'Author', where: { rank: 2 } } } }] },
  { name: '$relatedTo', wheres: ['a', 'b'].map((objectId) => ({ $relatedTo: { object: { __type: 'Pointer', className: 'Owner', objectId }, key: 'likes' } })) },
  { name: 'a user\'s equality', wheres: [{ username: 'ann' }, { username: 'bob' }] },
];

for (const { dialect, db } of dialects) {
  test(`${dialect.kind}: the benchmarks' pages are learnt once and then made from their values`, () => {
    for (const page of pages) {
      const shapes = new StatementShapes();
      const select = { select: objectJsonSelect, columns: objectJsonColumns(dialect) };
      let builds = 0;
      const compile = (query: PageShapeQuery): CompiledQuery => pageStatement({ dialect, appId: query.appId, className: query.className, readers: query.readers }, select, query).compile(db);
      const queries = page.wheres.map((where) => ({
        appId: 'app', className: 'C', readers: ['*'], limit: 20, skip: 0, where: parseWhere(where), order: (page.order ?? []).map((field) => ({ path: [field], descending: false })),
      }));
      for (const [i, query] of queries.entries()) {
        const shape = pageShape('json', query);
        assert.ok(shape, page.name);
        const statement = shapes.compiled(shape.key, shape.values, (values) => (builds++, compile(pageWithValues(query, values))));
        const afresh = compile(query);
        assert.equal(statement.sql, afresh.sql, page.name);
        assert.deepEqual(statement.parameters, afresh.parameters, page.name);
        // The first page is built, and built again with probes to learn its recipe; later pages are not built.
        assert.equal(builds, 2, `${page.name}, page ${i + 1}`);
      }
    }
  });
}

// Learning searches each parameter for each value's text: quadratic in the values. An $in of 5,000 values (any
// caller may send one) held a SQLite node for seconds a page (test/query-lists.test.ts timed out), so pages of many
// values, or whose key is long, are built afresh once a page and never kept.
for (const { dialect, db } of dialects) {
  test(`${dialect.kind}: a page of many values is built once a page, never learnt or kept`, () => {
    const shapes = new StatementShapes();
    const select = { select: objectJsonSelect, columns: objectJsonColumns(dialect) };
    const compile = (query: PageShapeQuery): CompiledQuery => pageStatement({ dialect, appId: query.appId, className: query.className, readers: query.readers }, select, query).compile(db);
    for (const [name, where] of [
      ['an $in of 5,000 numbers', { group: { $in: Array.from({ length: 5000 }, (_, i) => i) } }],
      ['an $in of 17 strings', { group: { $in: Array.from({ length: 17 }, (_, i) => `v${i}`) } }],
      ['a long key', { group: { $in: Array.from({ length: 300 }, () => 'the same value, kept whole in the key') } }],
    ] as const) {
      const query = { appId: 'app', className: 'C', readers: ['*'], limit: 20, skip: 0, where: parseWhere(where), order: [] };
      const shape = pageShape('json', query);
      assert.ok(shape, name);
      for (let page = 1; page <= 2; page++) {
        let builds = 0;
        const statement = shapes.compiled(shape.key, shape.values, (values) => (builds++, compile(pageWithValues(query, values))));
        assert.equal(builds, 1, `${name}, page ${page}`);
        assert.deepEqual(statement, compile(query), name);
      }
    }
  });
}

// The role page of bench:roles (a user's readers, createdAt from a bound, in createdAt order) and pages of other users:
// the users and the time bounds are values of one shape, so pages after the first are not built (with either in the
// key, every page of a random bound or of a new user was built twice and the kept shapes churned).
for (const { dialect, db } of dialects) {
  test(`${dialect.kind}: pages of other users and other time bounds are made from one shape's recipe`, () => {
    const shapes = new StatementShapes();
    const select = { select: objectJsonSelect, columns: objectJsonColumns(dialect) };
    let builds = 0;
    const compile = (query: PageShapeQuery): CompiledQuery => pageStatement({ dialect, appId: query.appId, className: query.className, readers: query.readers }, select, query).compile(db);
    const t0 = Date.UTC(2023, 0, 1);
    for (const [i, user] of ['u1', 'u2', 'u3', 'u1'].entries()) {
      for (const ms of [t0, t0 + 1234567, t0 + i]) {
        for (const where of [{ createdAt: { $gte: { __type: 'Date', iso: new Date(ms).toISOString() } } }, { createdAt: { $gte: ms + 0.5 } }]) {
          const query = { appId: 'app', className: 'C', readers: ['*', user], limit: 20, skip: 0, where: parseWhere(where), order: [{ path: ['createdAt'], descending: false }] };
          const shape = pageShape('json', query);
          assert.ok(shape);
          const statement = shapes.compiled(shape.key, shape.values, (values) => (builds++, compile(pageWithValues(query, values))), shape.times);
          const afresh = compile(query);
          assert.equal(statement.sql, afresh.sql);
          assert.deepEqual(statement.parameters, afresh.parameters, `${user} ${JSON.stringify(where)}`);
        }
      }
    }
    assert.equal(builds, 2);
  });
}

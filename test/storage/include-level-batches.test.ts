// Include levels made together (getObjectsJson): on PostgreSQL the levels of a turn with the same readers go as one
// statement of all their pairs (PostgresStore.levelTuples, a LookupBatcher), each level answered the rows of its own
// pairs. Their answers must be the answers of the same levels read one at a time, with readers that see different
// rows in one turn (a batch keyed without the readers would hand a private row to the public level).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freshApp, objectOf, useStore } from './stores.ts';
import type { FoundJson, Readers } from '../../src/objects/types.ts';

const store = useStore();

type Level = { refs: Array<{ className: string; objectId: string }>; readers: Readers };

/** A level's rows as `class/id:fields`, sorted (a level answers in any order). */
const rowsOf = (rows: Array<FoundJson & { className: string }>) =>
  rows.map((row) => `${row.className}/${row.objectId}:${row.createdAt}:${row.updatedAt}:${row.dataJson}`).sort();

test('include levels made together answer as the same levels read one at a time', async () => {
  const appId = await freshApp(store());
  const authors = [];
  for (let i = 0; i < 6; i++) {
    const author = objectOf('Author', { name: `author ${i}`, rank: i }, i % 3 === 0 ? { u1: { read: true } } : null);
    assert.equal((await store().insertObject(appId, author)).ok, true);
    authors.push(author);
  }
  const category = objectOf('Category', { title: 'only' });
  assert.equal((await store().insertObject(appId, category)).ok, true);
  // The same id in another class: a pair, not an id, is what a level asks for.
  const twin = { ...objectOf('Category', { title: 'twin' }), objectId: authors[1].objectId };
  assert.equal((await store().insertObject(appId, twin)).ok, true);
  const ref = (object: { className: string; objectId: string }) => ({ className: object.className, objectId: object.objectId });
  const missing = { className: 'Author', objectId: 'ffffffffffffffffffffffff' };
  const levels: Level[] = [
    { refs: [ref(authors[0]), ref(authors[1]), ref(category)], readers: ['*'] },
    { refs: [ref(authors[0]), ref(authors[2]), ref(twin), missing], readers: ['*', 'u1'] },
    { refs: [ref(authors[1]), ref(authors[3]), ref(category)], readers: ['*'] },
    { refs: [ref(authors[3]), ref(authors[4])], readers: null },
    { refs: [ref(twin), ref(authors[5])], readers: ['*'] },
  ];
  const read = (level: Level) => store().getObjectsJson(appId, level.refs, level.readers);
  const alone = [];
  for (const level of levels) alone.push(rowsOf(await read(level)));
  // What each level holds: the private authors (0 and 3) only with u1's readers or the master key.
  const ids = (level: string[]) => level.map((row) => row.slice(0, row.indexOf(':')));
  assert.deepEqual(alone.map(ids), [
    [`Author/${authors[1].objectId}`, `Category/${category.objectId}`],
    [`Author/${authors[0].objectId}`, `Author/${authors[2].objectId}`, `Category/${twin.objectId}`],
    [`Author/${authors[1].objectId}`, `Category/${category.objectId}`],
    [`Author/${authors[3].objectId}`, `Author/${authors[4].objectId}`],
    [`Author/${authors[5].objectId}`, `Category/${twin.objectId}`],
  ]);
  assert.equal(alone[1].find((row) => row.startsWith('Category/'))!.includes('"title":"twin"'), true);
  for (let run = 0; run < 3; run++) {
    const together = await Promise.all(levels.map(read));
    assert.deepEqual(together.map(rowsOf), alone, `run ${run}`);
  }
});

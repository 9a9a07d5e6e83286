// Conformance of RelationStore (src/storage/relation-store.ts) and of the relation parts of the Store's
// object verbs: changes committed with the object write or not at all, the two where nodes ($relatedTo,
// a relation field holding a pointer) under the readers of the query, and what a delete leaves.
// Runs on the database the run selects (test/storage/stores.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FindQuery, StoredObject, Where } from '../../src/objects/types.ts';
import type { ObjectRef } from '../../src/storage/store.ts';
import { prepareImportBatch } from '../../src/storage/import-batch.ts';
import { freshApp, objectOf, useStore } from './stores.ts';

const store = useStore();
const refOf = (appId: string, object: StoredObject): ObjectRef => ({ appId, className: object.className, objectId: object.objectId });
const ids = (objects: StoredObject[]) => objects.map((object) => object.objectId);

async function insertAll(appId: string, objects: StoredObject[]): Promise<void> {
  for (const object of objects) assert.equal((await store().insertObject(appId, object)).ok, true);
}

async function find(appId: string, className: string, query: Partial<FindQuery> & { where: Where }): Promise<string[]> {
  const found = await store().findObjects(appId, className, { order: [], limit: 100, skip: 0, readers: null, ...query });
  return ids(found);
}

test('change: adds members once, removes them, in the order given; members lists them by id', async () => {
  const appId = await freshApp(store());
  const owner = { appId, className: 'Person', objectId: 'p1' };
  assert.deepEqual(await store().relations.change(owner, [{ key: 'likes', targetClass: 'Post', add: ['b', 'a', 'c', 'a'], remove: [] }]), { ok: true });
  assert.deepEqual(await store().relations.members(owner, 'likes', 10), ['a', 'b', 'c']);
  await store().relations.change(owner, [
    { key: 'likes', targetClass: 'Post', add: ['a', 'd'], remove: ['b', 'zz'] },
    { key: 'likes', targetClass: 'Post', add: [], remove: ['c'] },
  ]);
  assert.deepEqual(await store().relations.members(owner, 'likes', 10), ['a', 'd']);
  assert.deepEqual(await store().relations.members(owner, 'likes', 1), ['a']);
  assert.deepEqual(await store().relations.members(owner, 'other', 10), []);
  assert.deepEqual(await store().relations.members({ ...owner, objectId: 'p2' }, 'likes', 10), [], 'members belong to one owner');
});

test('keysOf: a field is a relation to the class first written, and stays one; a clash stores nothing of the call', async () => {
  const appId = await freshApp(store());
  const owner = { appId, className: 'Person', objectId: 'p1' };
  assert.deepEqual(await store().relations.keysOf(appId, 'Person'), {});
  await store().relations.change(owner, [{ key: 'likes', targetClass: 'Post', add: ['a'], remove: [] }]);
  await store().relations.change(owner, [{ key: 'friends', targetClass: '_User', add: [], remove: ['x'] }]);
  assert.deepEqual(await store().relations.keysOf(appId, 'Person'), { friends: '_User', likes: 'Post' });
  assert.deepEqual(await store().relations.keysOf(appId, 'Post'), {});
  const clash = await store().relations.change(owner, [
    { key: 'fans', targetClass: '_User', add: ['u'], remove: [] },
    { key: 'likes', targetClass: 'Comment', add: ['c'], remove: [] },
  ]);
  assert.deepEqual(clash, { ok: false, reason: 'relationClass', key: 'likes', targetClass: 'Post' });
  assert.deepEqual(await store().relations.members(owner, 'fans', 10), [], 'the change before the clash was rolled back');
  assert.deepEqual(await store().relations.keysOf(appId, 'Person'), { friends: '_User', likes: 'Post' });
  const another = await store().relations.keysOf(await freshApp(store()), 'Person');
  assert.deepEqual(another, {}, 'relation fields belong to one application');
});

test('keysOf: processes fixing a field together agree on one class', async () => {
  const appId = await freshApp(store());
  const second = (await store.another()) ?? store();
  const classes = ['A', 'B', 'C', 'D', 'E', 'F'];
  const outcomes = await Promise.all(
    classes.map((targetClass, i) =>
      (i % 2 ? second : store()).relations.change({ appId, className: 'Person', objectId: `p${i}` }, [{ key: 'k', targetClass, add: ['t'], remove: [] }]),
    ),
  );
  const fixed = (await store().relations.keysOf(appId, 'Person')).k;
  assert.equal(outcomes.filter((outcome) => outcome.ok).length, 1);
  for (const outcome of outcomes) if (!outcome.ok) assert.equal(outcome.targetClass, fixed);
});

test('insertObject and updateObject: relation changes commit with the write, or not at all', async () => {
  const appId = await freshApp(store());
  const person = objectOf('Person', { name: 'ann' });
  assert.equal((await store().insertObject(appId, person, [{ key: 'likes', targetClass: 'Post', add: ['a', 'b'], remove: [] }])).ok, true);
  const ref = refOf(appId, person);
  assert.deepEqual(await store().getObject(ref, null), person);
  assert.deepEqual(await store().relations.members(ref, 'likes', 10), ['a', 'b']);

  const clashing = objectOf('Person', { name: 'bob' });
  const clash = await store().insertObject(appId, clashing, [{ key: 'likes', targetClass: 'Comment', add: ['c'], remove: [] }]);
  assert.deepEqual(clash, { ok: false, reason: 'relationClass', key: 'likes', targetClass: 'Post' });
  assert.equal(await store().getObject(refOf(appId, clashing), null), null, 'no object without its relations');

  const renamed = { ...person, data: { name: 'anne' }, updatedAt: person.updatedAt + 1 };
  const updated = await store().updateObject(ref, () => renamed, undefined, [{ key: 'likes', targetClass: 'Post', add: ['c'], remove: ['a'] }]);
  assert.deepEqual(updated, { ok: true, object: renamed });
  assert.deepEqual(await store().relations.members(ref, 'likes', 10), ['b', 'c']);

  const refused = await store().updateObject(ref, () => ({ refused: 'no' }), undefined, [{ key: 'likes', targetClass: 'Post', add: ['x'], remove: [] }]);
  assert.deepEqual(refused, { ok: false, reason: 'refused', refusal: 'no' });
  const unmet = await store().updateObject(ref, (current) => current, { where: { op: 'eq', path: ['name'], value: 'zed' }, readers: null }, [
    { key: 'likes', targetClass: 'Post', add: ['y'], remove: [] },
  ]);
  assert.deepEqual(unmet, { ok: false, reason: 'conditionFailed' });
  const other = objectOf('Person', {});
  const missing = await store().updateObject(refOf(appId, other), (current) => current, undefined, [{ key: 'likes', targetClass: 'Post', add: ['z'], remove: [] }]);
  assert.deepEqual(missing, { ok: false, reason: 'notFound' });
  const clashed = await store().updateObject(ref, () => ({ ...renamed, data: { name: 'x' } }), undefined, [{ key: 'likes', targetClass: 'Comment', add: ['q'], remove: [] }]);
  assert.deepEqual(clashed, { ok: false, reason: 'relationClass', key: 'likes', targetClass: 'Post' });
  assert.deepEqual((await store().getObject(ref, null))?.data, { name: 'anne' }, 'the object write was rolled back with the clash');
  assert.deepEqual(await store().relations.members(ref, 'likes', 10), ['b', 'c']);
  assert.deepEqual(await store().relations.members(refOf(appId, other), 'likes', 10), []);
});

test('relatedTo: the owner relation\'s members that exist, under the readers, in any order, paged and counted', async () => {
  const appId = await freshApp(store());
  const owner = objectOf('Person', {});
  const posts = [0, 1, 2, 3, 4].map((n) => objectOf('Post', { n }, n === 2 ? { u1: { read: true } } : null));
  const stranger = objectOf('Post', { n: 9 });
  await insertAll(appId, [owner, ...posts, stranger]);
  const ref = refOf(appId, owner);
  await store().relations.change(ref, [{ key: 'likes', targetClass: 'Post', add: [...ids(posts), 'gone'], remove: [] }]);
  await store().relations.change(ref, [{ key: 'other', targetClass: 'Post', add: [stranger.objectId], remove: [] }]);
  const related: Where = { op: 'relatedTo', owner: { className: 'Person', objectId: owner.objectId }, key: 'likes' };
  assert.deepEqual(await find(appId, 'Post', { where: related }), ids(posts), 'insertion order; a member that does not exist is not there');
  assert.deepEqual(await find(appId, 'Post', { where: related, readers: ['*'] }), ids(posts.filter((_, i) => i !== 2)));
  assert.deepEqual(await find(appId, 'Post', { where: related, readers: ['*', 'u1'] }), ids(posts));
  const byN = [{ path: ['n'], descending: true }];
  assert.deepEqual(await find(appId, 'Post', { where: related, order: byN, skip: 1, limit: 2 }), ids([posts[3], posts[2]]));
  const withMore: Where = { op: 'and', items: [related, { op: 'gte', path: ['n'], value: 3 }] };
  assert.deepEqual(await find(appId, 'Post', { where: withMore }), ids(posts.slice(3)));
  const either: Where = { op: 'or', items: [related, { op: 'eq', path: ['n'], value: 9 }] };
  assert.deepEqual(await find(appId, 'Post', { where: either }), ids([...posts, stranger]));
  assert.equal(await store().countObjects(appId, 'Post', related, null), 5);
  assert.equal(await store().countObjects(appId, 'Post', related, ['*']), 4);
  assert.deepEqual(await find(appId, 'Comment', { where: related }), [], 'members of another class are not read as this one');
  const nobody: Where = { op: 'relatedTo', owner: { className: 'Person', objectId: 'nobody' }, key: 'likes' };
  assert.deepEqual(await find(appId, 'Post', { where: nobody }), []);
});

test('relationHolds: the owners whose relation holds any of the targets, under the readers; owners lists their ids', async () => {
  const appId = await freshApp(store());
  const people = [0, 1, 2].map((n) => objectOf('Person', { n }, n === 1 ? { u1: { read: true } } : null));
  await insertAll(appId, people);
  const [p0, p1, p2] = people.map((person) => refOf(appId, person));
  await store().relations.change(p0, [{ key: 'likes', targetClass: 'Post', add: ['a', 'b'], remove: [] }]);
  await store().relations.change(p1, [{ key: 'likes', targetClass: 'Post', add: ['b'], remove: [] }]);
  await store().relations.change(p2, [{ key: 'fans', targetClass: 'Post', add: ['a'], remove: [] }]);
  const holds = (...objectIds: string[]): Where => ({ op: 'relationHolds', key: 'likes', targets: { className: 'Post', objectIds } });
  assert.deepEqual(await find(appId, 'Person', { where: holds('a') }), ids([people[0]]));
  assert.deepEqual(await find(appId, 'Person', { where: holds('b') }), ids(people.slice(0, 2)));
  assert.deepEqual(await find(appId, 'Person', { where: holds('b'), readers: ['*'] }), ids([people[0]]));
  assert.deepEqual(await find(appId, 'Person', { where: holds('a', 'b', 'c') }), ids(people.slice(0, 2)));
  assert.deepEqual(await find(appId, 'Person', { where: holds() }), []);
  assert.deepEqual(await find(appId, 'Person', { where: { op: 'not', item: holds('a') } }), ids(people.slice(1)));
  const otherClass: Where = { op: 'relationHolds', key: 'likes', targets: { className: 'Comment', objectIds: ['a'] } };
  assert.deepEqual(await find(appId, 'Person', { where: otherClass }), []);
  assert.equal(await store().countObjects(appId, 'Person', holds('b'), null), 2);
  assert.deepEqual(await store().relations.owners(appId, 'Person', 'likes', { className: 'Post', objectIds: ['b', 'a'] }), [p0.objectId, p1.objectId].sort());
  assert.deepEqual(await store().relations.owners(appId, 'Person', 'fans', { className: 'Post', objectIds: ['a'] }), [p2.objectId]);
  assert.deepEqual(await store().relations.owners(appId, 'Person', 'likes', { className: 'Post', objectIds: [] }), []);
});

test('deleteObject: an owner takes its relation rows with it, and a deleted target leaves every relation', async () => {
  const appId = await freshApp(store());
  const owner = objectOf('Person', {});
  const posts = [objectOf('Post', {}), objectOf('Post', {})];
  await insertAll(appId, [owner, ...posts]);
  const ref = refOf(appId, owner);
  await store().relations.change(ref, [{ key: 'likes', targetClass: 'Post', add: ids(posts), remove: [] }]);
  const fan = { appId, className: 'Fan', objectId: 'f1' };
  await store().relations.change(fan, [{ key: 'people', targetClass: 'Person', add: [owner.objectId], remove: [] }]);

  assert.equal((await store().deleteObject(refOf(appId, posts[0]), () => null)).ok, true);
  assert.deepEqual(await store().relations.members(ref, 'likes', 10), [posts[1].objectId]);
  assert.equal((await store().insertObject(appId, posts[0])).ok, true);
  const related: Where = { op: 'relatedTo', owner: { className: 'Person', objectId: owner.objectId }, key: 'likes' };
  assert.deepEqual(await find(appId, 'Post', { where: related }), [posts[1].objectId], 'an object made again with the id is no member');

  assert.equal((await store().deleteObject(ref, () => null)).ok, true);
  assert.deepEqual(await store().relations.members(ref, 'likes', 10), []);
  assert.deepEqual(await store().relations.members(fan, 'people', 10), []);
  assert.deepEqual(await store().relations.keysOf(appId, 'Person'), { likes: 'Post' }, 'the field stays a relation');
  const refused = await store().deleteObject(refOf(appId, posts[1]), () => ({ refused: 'no' }));
  assert.equal(refused.ok, false);
});

test('a relation of thousands of members: changes of many ids at once, one page read by the index', async () => {
  const appId = await freshApp(store());
  const owner = objectOf('Person', {});
  const posts = Array.from({ length: 1500 }, (_, n) => objectOf('Post', { n }));
  const records = posts.map((object) => ({ object, passwordHash: null, session: null }));
  await store().ops.importObjects(prepareImportBatch(store().kind, appId, 'Post', records));
  await insertAll(appId, [owner]);
  const ref = refOf(appId, owner);
  await store().relations.change(ref, [
    { key: 'likes', targetClass: 'Post', add: ids(posts.slice(0, 1000)), remove: [] },
    { key: 'likes', targetClass: 'Post', add: ids(posts.slice(1000)), remove: ids(posts.slice(0, 10)) },
  ]);
  const related: Where = { op: 'relatedTo', owner: { className: 'Person', objectId: owner.objectId }, key: 'likes' };
  assert.deepEqual(await find(appId, 'Post', { where: related, limit: 3 }), ids(posts.slice(10, 13)));
  assert.equal(await store().countObjects(appId, 'Post', related, ['*']), 1490);
});

// Conformance of the SchemaStore (src/storage/schema-store.ts): a field's type is kept once, by the
// first writer, however many race; every writer reads the kept type back; defaults are set and cleared
// on kept fields only. Runs on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FieldType } from '../../src/storage/schema-store.ts';
import { unique, useStore } from './stores.ts';

const store = useStore();
const number: FieldType = { type: 'Number' };
const text: FieldType = { type: 'String' };
const pointer: FieldType = { type: 'Pointer', className: 'Post' };

test('learn keeps new fields and answers each named field’s kept type, the earlier one where there was one', async () => {
  const appId = unique('app');
  assert.deepEqual(await store().schemas.learn(appId, 'Game', [{ name: 'score', type: number }, { name: 'post', type: pointer }]), new Map([
    ['score', number],
    ['post', pointer],
  ]));
  assert.deepEqual(await store().schemas.learn(appId, 'Game', [{ name: 'score', type: text }, { name: 'title', type: text }]), new Map([
    ['score', number],
    ['title', text],
  ]));
  assert.deepEqual(await store().schemas.fields(appId, 'Game'), [
    { name: 'post', type: pointer },
    { name: 'score', type: number },
    { name: 'title', type: text },
  ]);
  assert.deepEqual(await store().schemas.learn(appId, 'Game', []), new Map());
});

test('learn: classes and applications keep their fields apart', async () => {
  const appId = unique('app');
  const other = unique('app');
  await store().schemas.learn(appId, 'A', [{ name: 'x', type: number }]);
  await store().schemas.learn(appId, 'B', [{ name: 'x', type: text }]);
  await store().schemas.learn(other, 'A', [{ name: 'x', type: text }]);
  assert.deepEqual(await store().schemas.classes(appId), new Map([
    ['A', [{ name: 'x', type: number }]],
    ['B', [{ name: 'x', type: text }]],
  ]));
  assert.deepEqual(await store().schemas.fields(other, 'A'), [{ name: 'x', type: text }]);
  assert.deepEqual(await store().schemas.fields(other, 'B'), []);
  assert.deepEqual(await store().schemas.classes(unique('app')), new Map());
});

test('learn: writers racing on a new field with different types all read the one type kept', async () => {
  const appId = unique('app');
  const second = (await store.another()) ?? store();
  const types: FieldType[] = [number, text, pointer, { type: 'Boolean' }];
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) => (i % 2 ? second : store()).schemas.learn(appId, 'Race', [{ name: 'f', type: types[i % types.length] }])),
  );
  const kept = answers[0].get('f');
  assert.ok(kept);
  for (const answer of answers) assert.deepEqual(answer.get('f'), kept);
  assert.deepEqual(await store().schemas.fields(appId, 'Race'), [{ name: 'f', type: kept }]);
});

test('setDefault sets and clears a kept field’s default; false for a field the class does not have', async () => {
  const appId = unique('app');
  await store().schemas.learn(appId, 'Game', [{ name: 'tags', type: { type: 'Array' } }]);
  assert.equal(await store().schemas.setDefault(appId, 'Game', 'tags', ['a', { b: null }]), true);
  assert.deepEqual(await store().schemas.fields(appId, 'Game'), [{ name: 'tags', type: { type: 'Array' }, default: ['a', { b: null }] }]);
  assert.equal(await store().schemas.setDefault(appId, 'Game', 'tags', null), true);
  assert.deepEqual(await store().schemas.fields(appId, 'Game'), [{ name: 'tags', type: { type: 'Array' }, default: null }]);
  assert.equal(await store().schemas.setDefault(appId, 'Game', 'tags', undefined), true);
  assert.deepEqual(await store().schemas.fields(appId, 'Game'), [{ name: 'tags', type: { type: 'Array' } }]);
  assert.equal(await store().schemas.setDefault(appId, 'Game', 'missing', 1), false);
  assert.equal(await store().schemas.setDefault(appId, 'Other', 'tags', 1), false);
  assert.deepEqual(await store().schemas.fields(appId, 'Other'), []);
});

// Relations (issue #16 point 3) through the official JavaScript SDK (npm leancloud-storage): AV.Relation's
// add and remove (AddRelation, RemoveRelation, and the SDK's Batch of both in one save), relation.query()
// with find, count and constraints (with and without the target class known: redirectClassNameForKey),
// the reverse query, and the descriptor the SDK builds relations from on a fetched object.
// Before: the saves failed 400 code 1 "Not supported yet", the queries 400 code 102.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { rejection, sdkServer } from './helpers/sdk.ts';

sdkServer();

const names = (objects: AV.Queriable[]) => objects.map((o) => o.get('name') as string).sort();

async function posts(...list: string[]): Promise<AV.Object[]> {
  return AV.Object.saveAll(list.map((name, n) => new AV.Object('SdkRelPost', { name, n }))) as Promise<AV.Object[]>;
}

test('relation.add and remove save; relation.query() finds and counts the members', async () => {
  const [p1, p2, p3] = await posts('p1', 'p2', 'p3');
  const person = new AV.Object('SdkRelPerson', { name: 'ann' });
  for (const post of [p1, p2]) person.relation('likes').add(post);
  await person.save();
  const likes = person.relation('likes');
  assert.deepEqual(names(await likes.query().find()), ['p1', 'p2']);
  assert.equal(await likes.query().count(), 2);
  // Adds and removes on one relation in one save: the SDK sends them as one Batch op.
  likes.add(p3);
  likes.remove(p1);
  await person.save();
  assert.deepEqual(names(await person.relation('likes').query().find()), ['p2', 'p3']);
  const later = person.relation('likes').query().greaterThan('n', 1).descending('n');
  assert.deepEqual((await later.find()).map((o) => o.get('name')), ['p3']);
});

test('a fetched object reads the relation as its descriptor; without the target class the query is redirected', async () => {
  const [p1, p2] = await posts('q1', 'q2');
  const person = new AV.Object('SdkRelPerson', { name: 'bob' });
  for (const post of [p1, p2]) person.relation('likes').add(post);
  await person.save();
  const fetched = await AV.Object.createWithoutData('SdkRelPerson', person.id as string).fetch();
  const descriptor = fetched.get('likes') as AV.Relation<AV.Object>;
  assert.ok(descriptor instanceof AV.Relation);
  assert.equal(descriptor.targetClassName, 'SdkRelPost');
  assert.deepEqual(names(await fetched.relation('likes').query().find()), ['q1', 'q2']);
  // A relation of an object never fetched: the SDK asks the owner class with redirectClassNameForKey.
  const blind = AV.Object.createWithoutData('SdkRelPerson', person.id as string).relation('likes');
  const found = await blind.query().find();
  assert.deepEqual(names(found), ['q1', 'q2']);
  assert.equal((found[0] as AV.Object).className, 'SdkRelPost');
  assert.equal(await AV.Object.createWithoutData('SdkRelPerson', person.id as string).relation('likes').query().count(), 2);
  // Objects saved without the field read the descriptor too.
  const other = await new AV.Object('SdkRelPerson', { name: 'cat' }).save();
  const again = await AV.Object.createWithoutData('SdkRelPerson', other.id as string).fetch();
  assert.equal((again.get('likes') as AV.Relation<AV.Object>).targetClassName, 'SdkRelPost');
});

test('reverse query: equalTo with a pointer and AV.Relation.reverseQuery find the owners holding it', async () => {
  const [p1, p2] = await posts('r1', 'r2');
  const ann = new AV.Object('SdkRelFan', { name: 'ann' });
  for (const post of [p1, p2]) ann.relation('likes').add(post);
  const bob = new AV.Object('SdkRelFan', { name: 'bob' });
  bob.relation('likes').add(p2);
  await AV.Object.saveAll([ann, bob]);
  assert.deepEqual(names(await new AV.Query('SdkRelFan').equalTo('likes', p1).find()), ['ann']);
  assert.deepEqual(names(await AV.Relation.reverseQuery('SdkRelFan', 'likes', p2).find()), ['ann', 'bob']);
  assert.equal(await AV.Relation.reverseQuery('SdkRelFan', 'likes', p2).count(), 2);
});

test('a relation to another class than the field holds fails with 128', async () => {
  const [p1] = await posts('s1');
  const person = new AV.Object('SdkRelPerson', { name: 'dan' });
  person.relation('likes').add(p1);
  await person.save();
  const stranger = await new AV.Object('SdkRelStranger', { name: 'x' }).save();
  const other = AV.Object.createWithoutData('SdkRelPerson', person.id as string);
  other.relation('likes').add(stranger);
  const error = await rejection(other.save());
  assert.deepEqual([error.code, error.message], [128, 'Invalid relation data.']);
});

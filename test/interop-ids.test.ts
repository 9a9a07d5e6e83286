// Issue #15, points 2 and 3, through the official JavaScript SDK (npm leancloud-storage): Query#each
// pages by `objectId > last` ordered by objectId, so it visits every object once and in time order only
// when ids start with the creation time; a field named `2fa` (a comment system's user table has one) is
// saved, queried, ordered, selected and updated; startsWith/endsWith/contains send \Q…\E regexes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { sdkServer } from './helpers/sdk.ts';
import { uniqueName } from './helpers/accounts.ts';

sdkServer();

const master = { useMasterKey: true };

test('Query#each over 500 objects visits each once, in time order', async () => {
  const created: AV.Object[] = [];
  for (let chunk = 0; chunk < 5; chunk++) {
    const objects = Array.from({ length: 100 }, (_, i) => new AV.Object('EachTime', { n: chunk * 100 + i }));
    await AV.Object.saveAll(objects);
    created.push(...objects);
    // Let the ids of later chunks start with a later second.
    if (chunk === 1) await new Promise((resolve) => setTimeout(resolve, 1100));
  }
  const visited: AV.Object[] = [];
  await new AV.Query('EachTime').each((object: AV.Object) => {
    visited.push(object);
  });
  assert.equal(visited.length, 500);
  assert.deepEqual(new Set(visited.map((o) => o.id)), new Set(created.map((o) => o.id)));
  const times = visited.map((o) => o.createdAt!.getTime());
  assert.deepEqual(times, [...times].sort((a, b) => a - b));
  assert.ok(times.at(-1)! - times[0] >= 1000);
  // The SDK's own pages, and the same objects without order: insertion order, which here is time order too.
  const firstPage = await new AV.Query('EachTime').limit(1000).find();
  assert.deepEqual(firstPage.map((o) => o.get('n')), created.map((o) => o.get('n')));
  for (const id of visited.map((o) => o.id!)) assert.match(id, /^[0-9a-f]{24}$/);
});

test('a field named 2fa is saved, queried, ordered, selected and updated, on objects and users', async () => {
  const a = await new AV.Object('Comment', { '2fa': 'otp-a', nick: 'a', votes: 1 }).save();
  const b = await new AV.Object('Comment', { '2fa': 'otp-b', nick: 'b', votes: 2 }).save();
  const byValue = await new AV.Query('Comment').equalTo('2fa', 'otp-b').find();
  assert.deepEqual(byValue.map((o) => o.id), [b.id]);
  const ordered = await new AV.Query('Comment').descending('2fa').find();
  assert.deepEqual(ordered.map((o) => o.id), [b.id, a.id]);
  const selected = await new AV.Query('Comment').select('2fa').equalTo('objectId', a.id).first();
  assert.deepEqual([selected?.get('2fa'), selected?.get('nick')], ['otp-a', undefined]);
  a.set('2fa', 'otp-c');
  await a.save(null, { fetchWhenSave: true });
  const fetched = await AV.Object.createWithoutData('Comment', a.id!).fetch();
  assert.equal(fetched.get('2fa'), 'otp-c');
  assert.equal(await new AV.Query('Comment').exists('2fa').count(), 2);

  // The comment system's users: its admin sets 2fa with the master key on every call.
  const user = new AV.User();
  user.setUsername(uniqueName('twofa'));
  user.setPassword('interop-password');
  await user.signUp();
  const asAdmin = AV.Object.createWithoutData('_User', user.id!);
  asAdmin.set('2fa', 'secret-otp');
  await asAdmin.save(null, master);
  const users = await new AV.Query('_User').equalTo('2fa', 'secret-otp').find(master);
  assert.deepEqual(users.map((u) => u.id), [user.id]);
  const signedIn = await AV.User.logIn(user.getUsername(), 'interop-password');
  assert.equal(signedIn.get('2fa'), 'secret-otp');
  signedIn.unset('2fa');
  await signedIn.save();
  assert.equal((await AV.User.become(signedIn.getSessionToken())).get('2fa'), undefined);
  await AV.User.logOut();
});

test('startsWith, endsWith and contains match text literally, special characters included', async () => {
  const titles = ['a.b*c (1)', 'axb*c', 'Hello (world)', 'price: $5?', '你好，世界', 'back\\slash\\E end'];
  await AV.Object.saveAll(titles.map((title) => new AV.Object('Titles', { title })));
  const match = async (query: AV.Query<AV.Queriable>) => (await query.find()).map((o) => (o as AV.Object).get('title')).sort();
  const q = () => new AV.Query('Titles');
  assert.deepEqual(await match(q().startsWith('title', 'a.b')), ['a.b*c (1)']);
  assert.deepEqual(await match(q().startsWith('title', 'Hello (')), ['Hello (world)']);
  assert.deepEqual(await match(q().endsWith('title', 'b*c')), ['axb*c']);
  assert.deepEqual(await match(q().endsWith('title', '$5?')), ['price: $5?']);
  assert.deepEqual(await match(q().endsWith('title', '世界')), ['你好，世界']);
  assert.deepEqual(await match(q().contains('title', '*c')), ['a.b*c (1)', 'axb*c']);
  assert.deepEqual(await match(q().contains('title', '(')), ['Hello (world)', 'a.b*c (1)']);
  assert.deepEqual(await match(q().contains('title', '\\E')), ['back\\slash\\E end']);
  assert.deepEqual(await match(q().contains('title', '.')), ['a.b*c (1)']);
  assert.deepEqual(await match(q().startsWith('title', 'A.B')), []);
});

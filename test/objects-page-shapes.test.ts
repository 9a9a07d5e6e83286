// Query pages answered from a statement compiled for another page of the same shape (PageShapes,
// src/storage/sql/page-shapes.ts) answer exactly as that page compiled afresh. A page's limit is part of its
// shape, so a limit no other page used is compiled afresh: each page is asked at a shared limit after another
// page of its shape (the values made again from the recipe) and at a limit of its own (built afresh), and the two
// answers must be the same bytes, for values of every type the where compares.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const strings = ['a', 'b', "it's", 'say "hi"', 'back\\slash', '100%_done', 'É', 'E\u0301', '中文 😀', '\u2028', '', '[1]', '{"a":1}', 'true', '1'];
const numbers = [0, 1, -1, 2.5, 1e21, 5e-7, 42, -0.25, 2 ** 53];

let fresh = 500;
/** The page at the shared limit (after `primer`, so from the shape's recipe) and at a limit of its own (built afresh). */
async function bothWays(className: string, primer: unknown, where: unknown, extra: Record<string, unknown> = {}): Promise<void> {
  const ask = async (w: unknown, limit: number) => {
    const response = await server.client.get(`/1.1/classes/${className}`, { query: { where: w, limit, ...extra } });
    assert.equal(response.status, 200, response.text);
    return response.text;
  };
  await ask(primer, 100);
  const cached = await ask(where, 100);
  const built = await ask(where, fresh++);
  assert.equal(cached, built, `${JSON.stringify(where)} after ${JSON.stringify(primer)} ${JSON.stringify(extra)}`);
}

test('pages from a shape learnt on other values answer as pages built afresh, for values of every type', async () => {
  const owners: string[] = [];
  for (let i = 0; i < 3; i++) owners.push((await server.client.post('/1.1/classes/ShapeOwner', { n: i, s: strings[i] })).body.objectId);
  const values = [...strings, ...numbers, true, false, null];
  // A field holds one type (the class schema), an array any: `list` holds every kind of value.
  const bodies = values.map((v, i) => ({
    ...(i % 5 === 4 ? {} : { s: strings[i % strings.length], n: numbers[i % numbers.length] }),
    list: [v, strings[(i + 1) % strings.length], numbers[i % numbers.length]],
    b: i % 2 === 0,
    when: { __type: 'Date', iso: new Date(Date.UTC(2024, 0, 1 + i)).toISOString() },
    owner: { __type: 'Pointer', className: 'ShapeOwner', objectId: owners[i % owners.length] },
  }));
  for (const body of bodies) assert.equal((await server.client.post('/1.1/classes/Shaped', body)).status, 201);
  const ids = (await server.client.get('/1.1/classes/Shaped', { query: { limit: 1000 } })).body.results.map((o: { objectId: string }) => o.objectId);
  await server.client.put(`/1.1/classes/ShapeOwner/${owners[0]}`, { likes: { __op: 'AddRelation', objects: ids.slice(0, 5).map((objectId: string) => ({ __type: 'Pointer', className: 'Shaped', objectId })) } });
  await server.client.put(`/1.1/classes/ShapeOwner/${owners[1]}`, { likes: { __op: 'AddRelation', objects: ids.slice(3, 9).map((objectId: string) => ({ __type: 'Pointer', className: 'Shaped', objectId })) } });

  for (const field of ['s', 'n', 'list']) {
    for (const value of values) {
      await bothWays('Shaped', { [field]: 'primer' }, { [field]: value });
      await bothWays('Shaped', { [field]: 7 }, { [field]: value });
    }
  }
  for (const [j, value] of [...strings, ...numbers].entries()) {
    // A second value unlike the first, so a recipe that wrote one value for the other answers otherwise.
    const [otherString, otherNumber] = [strings[(j + 3) % strings.length], numbers[(j + 4) % numbers.length]];
    await bothWays('Shaped', { n: { $gte: 3 } }, { n: { $gte: value } }, { order: 'n' });
    await bothWays('Shaped', { s: { $lt: 'zz' } }, { s: { $lt: value } }, { order: '-s' });
    await bothWays('Shaped', { list: { $in: ['x', 3] } }, { list: { $in: [value, otherString] } });
    await bothWays('Shaped', { list: { $in: ['x', 3, 'y'] } }, { list: { $in: [value, otherNumber, otherString] } });
    await bothWays('Shaped', { $or: [{ s: 'x' }, { n: 1 }] }, { $or: [{ s: value }, { n: otherNumber }] });
    await bothWays('Shaped', { $or: [{ s: 'x' }, { list: 1 }] }, { $or: [{ s: otherString }, { list: value }] });
    await bothWays('Shaped', { s: 'x', n: { $lte: 1 } }, { s: value, n: { $lte: otherNumber } });
    await bothWays('Shaped', { list: 'x', n: { $gt: 1 } }, { list: otherString, n: { $gt: value } });
    await bothWays('Shaped', { objectId: 'x' }, { objectId: value });
    await bothWays('Shaped', { s: { $ne: 'x' } }, { s: { $ne: value } });
  }
  await bothWays('Shaped', { objectId: ids[0] }, { objectId: ids[1] });
  for (const when of bodies.slice(0, 3).map((body) => body.when)) {
    await bothWays('Shaped', { createdAt: { $gt: { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' } } }, { createdAt: { $gt: when } });
  }
  await bothWays('Shaped', { list: { $in: ['a', 'b'] } }, { list: { $in: ['a', 'a'] } });
  await bothWays('Shaped', { b: true }, { b: false });
  await bothWays('Shaped', { when: bodies[0].when }, { when: bodies[1].when });
  await bothWays('Shaped', { owner: bodies[0].owner }, { owner: bodies[1].owner });
  for (let i = 0; i < owners.length; i++) {
    await bothWays('Shaped', { owner: { $inQuery: { className: 'ShapeOwner', where: { n: 9 } } } }, { owner: { $inQuery: { className: 'ShapeOwner', where: { n: i } } } });
    await bothWays('Shaped', { owner: { $inQuery: { className: 'ShapeOwner', where: { s: 'q' } } } }, { owner: { $inQuery: { className: 'ShapeOwner', where: { s: strings[i] } } } });
    const related = (id: string) => ({ $relatedTo: { object: { __type: 'Pointer', className: 'ShapeOwner', objectId: id }, key: 'likes' } });
    await bothWays('Shaped', related('nobody'), related(owners[i]));
  }
  // The answers are not all empty: the comparisons above compare pages that hold objects.
  const some = await server.client.get('/1.1/classes/Shaped', { query: { where: { s: 'a' }, limit: 100 } });
  assert.ok(some.body.results.length > 1);
});

// A page's users (its readers: ['*', userId]) and its bounds on createdAt/updatedAt are values of its shape, not
// part of its key: one user's page is made from the recipe another user's page taught, and a time bound is bound
// as the whole milliseconds the where compares (rounded, clamped). Each page at the shared limit (after another
// user's or another bound's page) must answer the bytes it answers built afresh at a limit of its own.
test("pages of one shape for another user, and for other time bounds, answer as pages built afresh", async () => {
  const signUp = async (username: string) => (await server.client.post('/1.1/users', { username, password: 'pw-shapes' })).body as { objectId: string; sessionToken: string };
  const [ann, bob, cy] = [await signUp('shape-ann'), await signUp('shape-bob'), await signUp('shape-cy')];
  const relation = (className: string, objectId: string) => ({ __op: 'AddRelation', objects: [{ __type: 'Pointer', className, objectId }] });
  const role = await server.master.post('/1.1/roles', { name: 'ShapeReaders', ACL: { '*': { read: true } }, users: relation('_User', ann.objectId) });
  assert.equal(role.status, 201, role.text);
  await server.master.post('/1.1/roles', { name: 'ShapeOuter', ACL: { '*': { read: true } }, roles: relation('_Role', role.body.objectId), users: relation('_User', cy.objectId) });
  const acls = [{ '*': { read: true } }, { [ann.objectId]: { read: true } }, { [bob.objectId]: { read: true } }, { 'role:ShapeReaders': { read: true } }, { 'role:ShapeOuter': { read: true } }, {}];
  const created: number[] = [];
  for (let i = 0; i < 30; i++) {
    const made = await server.master.post('/1.1/classes/ShapedAcl', { n: i % 4, ACL: acls[i % acls.length] });
    assert.equal(made.status, 201, made.text);
    created.push(Date.parse(made.body.createdAt));
  }
  const users = [ann, bob, cy, null];
  const ask = async (user: { sessionToken: string } | null, where: unknown, limit: number, order = 'createdAt') => {
    const response = await server.client.withSession(user?.sessionToken).get('/1.1/classes/ShapedAcl', { query: { where, limit, order } });
    assert.equal(response.status, 200, response.text);
    return response.text;
  };
  const iso = (ms: number) => ({ __type: 'Date', iso: new Date(ms).toISOString() });
  const wheres: unknown[] = [
    { n: 1 },
    { n: { $in: [0, 2] } },
    { createdAt: { $gte: iso(created[7]) } },
    { createdAt: { $gt: iso(created[7]) } },
    { createdAt: { $lte: iso(created[20]) }, n: { $ne: 3 } },
    { createdAt: iso(created[12]) },
    { updatedAt: { $lt: iso(created[25]) } },
    { createdAt: { $gte: created[3] + 0.5 } },
    { createdAt: { $lt: created[9] + 0.5 } },
    { createdAt: created[5] + 0.5 },
    { createdAt: created[5] },
    { createdAt: { $gt: 1e300 } },
    { createdAt: { $lt: 1e300 } },
    { createdAt: { $gte: -1e300 } },
    { $or: [{ createdAt: { $lt: iso(created[4]) } }, { n: 2 }] },
  ];
  for (const where of wheres) {
    for (const [u, user] of users.entries()) {
      // The shape learnt from the first user's page, with another bound, then this user's page from its recipe.
      await ask(users[(u + 1) % users.length], where, 100);
      const cached = await ask(user, where, 100);
      const built = await ask(user, where, fresh++);
      assert.equal(cached, built, `${JSON.stringify(where)} as ${u}`);
    }
  }
  for (const user of users) {
    // A bound learnt on one time, asked at others (the recipe's values, each a time of an object or just past it).
    for (const ms of [created[0], created[11], created[11] + 1, created[29] + 1e6]) {
      const cached = await ask(user, { createdAt: { $gte: iso(ms) } }, 100);
      assert.equal(cached, await ask(user, { createdAt: { $gte: iso(ms) } }, fresh++), `${ms}`);
    }
  }
  // The pages differ between users, so the comparisons above compare pages that hold each user's objects.
  const seen = await Promise.all(users.map((user) => ask(user, { n: { $gte: 0 } }, 100)));
  assert.equal(new Set(seen).size, users.length);
});

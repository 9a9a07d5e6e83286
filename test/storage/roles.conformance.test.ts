// Conformance of RoleStore (src/storage/role-store.ts) and of the role part of every read's ACL rule
// (src/storage/sql/roles.ts): a user reads what its roles may, through nested roles at any depth, a cycle
// of roles ends, and a member removed reads nothing more in the very next read. Both databases
// (test/storage/stores.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject, Where } from '../../src/objects/types.ts';
import { freshApp, objectOf, useStore } from './stores.ts';

const store = useStore();

/** A `_Role` row named `name` (ids are the stores' test ids). */
async function role(appId: string, name: string): Promise<StoredObject> {
  const object = objectOf('_Role', { name }, {});
  assert.equal((await store().insertObject(appId, object)).ok, true);
  return object;
}

async function members(appId: string, owner: StoredObject, change: { users?: string[]; roles?: string[]; remove?: boolean }): Promise<void> {
  const ref = { appId, className: '_Role', objectId: owner.objectId };
  for (const [key, targetClass, ids] of [['users', '_User', change.users], ['roles', '_Role', change.roles]] as const) {
    if (!ids) continue;
    const outcome = await store().relations.change(ref, [
      { key, targetClass, add: change.remove ? [] : ids, remove: change.remove ? ids : [] },
    ]);
    assert.deepEqual(outcome, { ok: true });
  }
}

test('rolesOf: direct roles, roles holding them in their `roles` at any depth, a cycle ends; other apps apart', async () => {
  const appId = await freshApp(store());
  const [staff, moderators, admins, owners, loose] = await Promise.all(['Staff', 'Moderators', 'Admins', 'Owners', 'Loose'].map((n) => role(appId, n)));
  await members(appId, owners, { users: ['u1'] });
  await members(appId, admins, { users: ['u2'], roles: [owners.objectId] });
  // Moderators.roles holds Admins: Admins' users (and Owners', through Admins) get what Moderators get.
  await members(appId, moderators, { roles: [admins.objectId] });
  await members(appId, staff, { roles: [moderators.objectId] });
  await members(appId, loose, { users: ['u3'] });
  assert.deepEqual(await store().roles.rolesOf(appId, 'u1'), ['Admins', 'Moderators', 'Owners', 'Staff']);
  assert.deepEqual(await store().roles.rolesOf(appId, 'u2'), ['Admins', 'Moderators', 'Staff']);
  assert.deepEqual(await store().roles.rolesOf(appId, 'u3'), ['Loose']);
  assert.deepEqual(await store().roles.rolesOf(appId, 'nobody'), []);
  // A cycle: Owners.roles holds Staff, which (through Moderators and Admins) holds Owners.
  await members(appId, owners, { roles: [staff.objectId] });
  assert.deepEqual(await store().roles.rolesOf(appId, 'u1'), ['Admins', 'Moderators', 'Owners', 'Staff']);
  assert.deepEqual(await store().roles.rolesOf(appId, 'u2'), ['Admins', 'Moderators', 'Owners', 'Staff']);
  const otherApp = await freshApp(store());
  assert.deepEqual(await store().roles.rolesOf(otherApp, 'u1'), []);
  await members(appId, admins, { users: ['u2'], remove: true });
  assert.deepEqual(await store().roles.rolesOf(appId, 'u2'), []);
});

test('reads: an object whose ACL names a role is read by its members (nested too), in get, getObjects, find and count', async () => {
  const appId = await freshApp(store());
  const [readers, editors] = await Promise.all([role(appId, 'Readers'), role(appId, 'Editors')]);
  await members(appId, readers, { roles: [editors.objectId] });
  await members(appId, editors, { users: ['u1'] });
  await members(appId, readers, { users: ['u2'] });
  const secret = objectOf('Doc', { n: 1 }, { 'role:Readers': { read: true } });
  const other = objectOf('Doc', { n: 2 }, { 'role:Nobody': { read: true }, u9: { read: true } });
  const open = objectOf('Doc', { n: 3 }, null);
  for (const object of [secret, other, open]) assert.equal((await store().insertObject(appId, object)).ok, true);
  const ref = { appId, className: 'Doc', objectId: secret.objectId };
  const readable = async (readers: readonly string[]) => ({
    get: (await store().getObject(ref, readers))?.objectId ?? null,
    json: (await store().getObjectJson(ref, readers)) !== null,
    many: (await store().getObjects(appId, 'Doc', [secret.objectId, other.objectId], readers)).map((o) => o.objectId),
    find: (await store().findObjects(appId, 'Doc', { where: { op: 'const', value: true }, order: [], limit: 10, skip: 0, readers })).map((o) => o.data.n),
    count: await store().countObjects(appId, 'Doc', { op: 'const', value: true }, readers),
  });
  const granted = { get: secret.objectId, json: true, many: [secret.objectId], find: [1, 3], count: 2 };
  const refused = { get: null, json: false, many: [], find: [3], count: 1 };
  assert.deepEqual(await readable(['*', 'u1']), granted, 'through Editors, held in Readers.roles');
  assert.deepEqual(await readable(['*', 'u2']), granted, 'directly');
  assert.deepEqual(await readable(['*', 'u3']), refused);
  assert.deepEqual(await readable(['*']), refused);
  await members(appId, editors, { users: ['u1'], remove: true });
  assert.deepEqual(await readable(['*', 'u1']), refused, 'a removed member reads nothing more, at once');
  assert.deepEqual(await readable(['*', 'u2']), granted);
});

test("a write's condition is met only by a row its readers may read, roles included", async () => {
  const appId = await freshApp(store());
  const team = await role(appId, 'Team');
  await members(appId, team, { users: ['u1'] });
  const doc = objectOf('Doc', { n: 1 }, { 'role:Team': { read: true, write: true } });
  assert.equal((await store().insertObject(appId, doc)).ok, true);
  const ref = { appId, className: 'Doc', objectId: doc.objectId };
  const where: Where = { op: 'eq', path: ['n'], value: 1 };
  const write = (readers: string[]) => store().updateObject(ref, (current) => ({ ...current, data: { n: 1 } }), { where, readers });
  assert.equal((await write(['*', 'u1'])).ok, true);
  assert.deepEqual(await write(['*', 'u2']), { ok: false, reason: 'conditionFailed' });
});

// On PostgreSQL a read's roles come from roost_member_roles (migration 0020, dialect.memberRoles), a copy of the
// query rolesOf runs (rolePrincipals): every page and count must keep exactly the rows the principals rolesOf
// gives may read, for one user or several, nested roles, a cycle, and another application's roles of the same names.
test('a page and a count with users among the readers keep what their roles (rolesOf) may read', async () => {
  const appId = await freshApp(store());
  const otherApp = await freshApp(store());
  const names = ['A', 'B', 'C', 'D', 'E'];
  const roles = await Promise.all(names.map((n) => role(appId, n)));
  const [a, b, c, d, e] = roles;
  await members(appId, a, { users: ['u1'] });
  await members(appId, b, { roles: [a.objectId], users: ['u2'] });
  await members(appId, c, { roles: [b.objectId] });
  await members(appId, a, { roles: [c.objectId] });
  await members(appId, d, { users: ['u3'] });
  const foreign = await role(otherApp, 'E');
  await members(otherApp, foreign, { users: ['u1', 'u2', 'u3'] });
  void e;
  const acls = [null, { u1: { read: true } }, { u3: { read: true } }, ...names.map((n) => ({ [`role:${n}`]: { read: true } })), { 'role:E': { read: true }, u4: { read: true } }];
  const docs = acls.map((acl, i) => objectOf('Doc', { n: i }, acl));
  for (const doc of docs) assert.equal((await store().insertObject(appId, doc)).ok, true);
  for (const readers of [['*', 'u1'], ['*', 'u2'], ['*', 'u3'], ['*', 'u4'], ['*', 'u9'], ['*', 'u1', 'u3'], ['u2', 'role:D']]) {
    const principals = new Set(readers);
    for (const user of readers.filter((r) => r.startsWith('u'))) {
      for (const name of await store().roles.rolesOf(appId, user)) principals.add(`role:${name}`);
    }
    const expected = docs.filter((doc) => doc.acl === null ? principals.has('*') : Object.keys(doc.acl).some((p) => principals.has(p))).map((doc) => doc.data.n);
    const where: Where = { op: 'const', value: true };
    const found = (await store().findObjects(appId, 'Doc', { where, order: [], limit: 100, skip: 0, readers })).map((o) => o.data.n);
    assert.deepEqual(found, expected, JSON.stringify(readers));
    assert.equal(await store().countObjects(appId, 'Doc', where, readers), expected.length, JSON.stringify(readers));
  }
});

// Every sign-up kind (password, SMS sign-up-or-login, authData, anonymous) creates its user through
// one function with one body filter: which fields a client may set on creation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { startServer, type TestServer } from './helpers/harness.ts';
import { uniqueName } from './helpers/accounts.ts';
import { KeyClient, lastCode, smsOutboxDir, uniquePhone } from './helpers/sms.ts';

let server: TestServer;
let client: KeyClient;
let master: KeyClient;
const dir = smsOutboxDir();

before(async () => {
  server = await startServer({ env: { SMS_OUTBOX_DIR: dir } });
  client = new KeyClient({ url: server.url, appId: server.appId, appKey: server.appKey });
  master = new KeyClient({ url: server.url, appId: server.appId, appKey: server.appKey, masterKey: server.masterKey });
});
after(async () => {
  await server?.close();
});

const uid = () => `uid_${randomBytes(6).toString('hex')}`;

/** A code for a fresh number, and the body that signs it up with `fields`. */
async function smsBody(fields: Record<string, unknown>): Promise<Record<string, unknown>> {
  const phone = uniquePhone();
  const sent = await client.post('/1.1/requestSmsCode', { mobilePhoneNumber: phone });
  assert.equal(sent.status, 200, sent.text);
  return { mobilePhoneNumber: phone, smsCode: lastCode(dir, phone), ...fields };
}

/** The four sign-up kinds, each as POST path and the body that creates a new user with `fields`. */
const kinds: Array<{ name: string; path: string; body: (fields: Record<string, unknown>) => Promise<Record<string, unknown>> }> = [
  { name: 'password', path: '/1.1/users', body: async (fields) => ({ username: uniqueName(), password: 'pw-creation', ...fields }) },
  { name: 'sms', path: '/1.1/usersByMobilePhone', body: smsBody },
  { name: 'authData', path: '/1.1/users', body: async (fields) => ({ authData: { myplatform: { uid: uid() } }, ...fields }) },
  { name: 'anonymous', path: '/1.1/users', body: async (fields) => ({ authData: { anonymous: { id: randomUUID() } }, ...fields }) },
];

// Review of e2b2d15 (#14, accounts): password sign-up refused the verification flags from a client
// (119), while SMS and authData sign-up dropped them silently (SMS even for the master key).
test('every sign-up kind refuses the verification flags from a client (119) and takes them from the master key', async () => {
  for (const kind of kinds) {
    for (const flag of ['emailVerified', 'mobilePhoneVerified']) {
      const refused = await client.post(kind.path, await kind.body({ [flag]: true }));
      assert.equal(refused.status, 403, `${kind.name} ${flag}: ${refused.text}`);
      assert.equal(refused.body.code, 119, `${kind.name} ${flag}`);
    }
    const byMaster = await master.post(kind.path, await kind.body({ email: `${uid()}@example.com`, emailVerified: true }));
    assert.equal(byMaster.status, 201, `${kind.name}: ${byMaster.text}`);
    assert.equal(byMaster.body.emailVerified, true, kind.name);
    const echoed = await client.post(kind.path, await kind.body({ sessionToken: 'mine', city: 'Lanzhou' }));
    assert.equal(echoed.status, 201, `${kind.name}: ${echoed.text}`);
    assert.notEqual(echoed.body.sessionToken, 'mine', kind.name);
    assert.equal(echoed.body.city, 'Lanzhou', kind.name);
    const dotted = await client.post(kind.path, await kind.body({ 'password.x': 1 }));
    assert.deepEqual(
      [dotted.status, dotted.body],
      [400, { code: 105, error: "Invalid key name 'password.x': password cannot be written through a dotted key." }],
      kind.name,
    );
  }
});

// Review of e2b2d15 (#14, accounts): SMS and authData sign-up passed a dotted `authData.<platform>`
// key through as a field, so the new user was bound to an identity no provider check had seen (an
// authData sign-in of that platform uid then signed into this user).
test('no sign-up kind binds an identity from a dotted authData key', async () => {
  for (const kind of kinds) {
    const victim = uid();
    const response = await client.post(kind.path, await kind.body({ 'authData.myplatform': { uid: victim } }));
    assert.equal(response.status, 403, `${kind.name}: ${response.text}`);
    assert.equal(response.body.code, 119, kind.name);
    const owner = await client.post('/1.1/users', { authData: { myplatform: { uid: victim } } });
    assert.equal(owner.status, 201, `${kind.name}: ${owner.text}`);
  }
  const withAuthData = await client.post('/1.1/usersByMobilePhone', await smsBody({ authData: { myplatform: { uid: uid() } } }));
  assert.equal(withAuthData.status, 403, withAuthData.text);
  assert.equal(withAuthData.body.code, 119);
});

// Review of e2b2d15 (#14, accounts): SMS sign-up consumed the code before it read the rest of the
// body, so a body it refused used the code up.
test('an SMS sign-up refused for its body leaves the code usable', async () => {
  const body = await smsBody({});
  const refused = await client.post('/1.1/usersByMobilePhone', { ...body, email: 'not an address' });
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.body.code, 125);
  const created = await client.post('/1.1/usersByMobilePhone', body);
  assert.equal(created.status, 201, created.text);
});

// Route schemas (src/http/schema.ts): a wrong-typed field on each declared route answers exactly what the
// hand-written checks the schemas replaced answered (status, code, message), in the same order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import type { Client } from './helpers/client.ts';
import { catalogue } from '../src/lib/errors.ts';

let server: TestServer;
let user: SignedUpUser;
before(async () => {
  server = await startServer();
  user = await signUp(server.client);
});
after(async () => {
  await server?.close();
});

type Case = [body: unknown, status: number, code: number, error: string];
const invalidJson = catalogue.invalidJson.message;

async function expectAll(client: Client, method: string, path: string, cases: Case[], session?: string): Promise<void> {
  for (const [body, status, code, error] of cases) {
    const response = await client.request(method, path, body === undefined ? { session } : { body, session });
    assert.deepEqual([response.status, response.body], [status, { code, error }], `${method} ${path} ${JSON.stringify(body)}`);
  }
}

test('POST /1.1/login: each fault answers as before, in the same order', async () => {
  const identifier = 'Log in with a username, an email or a mobilePhoneNumber.';
  const exactlyOne = 'Log in with exactly one of username, email or mobilePhoneNumber.';
  await expectAll(server.client, 'POST', '/1.1/login', [
    [undefined, 400, 107, invalidJson],
    [[], 400, 107, invalidJson],
    ['text', 400, 107, invalidJson],
    [{}, 400, 200, identifier],
    [{ username: null, email: null, password: 'x' }, 400, 200, identifier],
    [{ username: 'a', email: 'b', password: 'x' }, 400, 1, exactlyOne],
    // Two identifiers is answered before either's type.
    [{ username: 5, mobilePhoneNumber: 7 }, 400, 1, exactlyOne],
    [{ username: 5, password: 'x' }, 400, 217, catalogue.usernameBlank.message],
    [{ username: ' \n', password: 'x' }, 400, 217, catalogue.usernameBlank.message],
    [{ email: 5, password: 'x' }, 400, 125, catalogue.invalidEmail.message],
    [{ mobilePhoneNumber: [], password: 'x' }, 400, 127, catalogue.invalidPhone.message],
    [{ username: 5 }, 400, 217, catalogue.usernameBlank.message],
    [{ username: 'nobody' }, 400, 201, catalogue.passwordMissing.message],
    [{ username: 'nobody', password: null }, 400, 201, catalogue.passwordMissing.message],
    [{ username: 'nobody', password: 5 }, 400, 218, catalogue.passwordBlank.message],
    [{ username: 'nobody', password: '' }, 400, 218, catalogue.passwordBlank.message],
    [{ username: 'nobody', password: 'x' }, 400, 211, catalogue.userNotFound.message],
    [{ username: user.username, password: 'wrong' }, 400, 210, catalogue.passwordMismatch.message],
    // smsCode without a password is the SMS login, checked by its own flow.
    [{ smsCode: '123456' }, 400, 212, catalogue.phoneMissing.message],
    [{ smsCode: '1', password: 'x' }, 400, 200, identifier],
  ]);
  const ok = await server.client.request('POST', '/1.1/login', { body: { username: user.username, password: user.password, extra: [1] } });
  assert.equal(ok.status, 200);
});

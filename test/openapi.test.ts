// Route schemas (src/http/schema.ts) and the API description built from them (src/http/routes/openapi.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type TestServer } from './helpers/harness.ts';
import { uniquePhone } from './helpers/sms.ts';
import { signUp } from './helpers/accounts.ts';
import { catalogue, type ErrorKind } from '../src/lib/errors.ts';
import { compileSchema } from '../src/lib/json-schema.ts';
import type { SchemaObject } from 'ajv';
import { adminAndViewer } from './helpers/console.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

/**
 * Every route Fastify has, read from its own route tree (not from the collector under test): each
 * line of printRoutes is a segment under the nearest less indented line; `:a|:b` is one node for
 * routes whose parameters are named differently (which method is whose the tree does not say).
 */
function registeredRoutes(): Array<{ method: string; paths: string[] }> {
  const out: Array<{ method: string; paths: string[] }> = [];
  const stack: Array<{ depth: number; paths: string[] }> = [];
  for (const line of server.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ├└─]*)(\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length;
    while (stack.length > 0 && stack[stack.length - 1].depth >= depth) stack.pop();
    const parents = stack.length > 0 ? stack[stack.length - 1].paths : [''];
    const firstParam = match[2].indexOf(':');
    const alternatives = firstParam >= 0 ? match[2].slice(firstParam).split('|').map((alt) => match[2].slice(0, firstParam) + alt) : [match[2]];
    const paths = parents.flatMap((parent) => alternatives.map((segment) => parent + segment));
    stack.push({ depth, paths });
    for (const method of match[3]?.split(', ') ?? []) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      out.push({ method: method.toLowerCase(), paths: paths.map((path) => path.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{path}')) });
    }
  }
  return out;
}

test('GET /openapi.json is OpenAPI 3.1 and holds every registered route', async () => {
  const response = await server.client.request('GET', '/openapi.json');
  assert.equal(response.status, 200);
  assert.equal(response.body.openapi, '3.1.0');
  const routes = registeredRoutes();
  assert.ok(routes.length > 60, `only ${routes.length} routes read from Fastify`);
  for (const { method, paths } of routes) {
    assert.ok(paths.some((path) => response.body.paths[path]?.[method]), `${method.toUpperCase()} ${paths.join(' or ')} is not in the document`);
  }
  // OpenAPI's path syntax only: no Fastify `:param`, no wildcard `*` (the files route's rest is {path}).
  assert.deepEqual(Object.keys(response.body.paths).filter((path) => /[:*]/.test(path)), []);
  assert.deepEqual(response.body.paths['/files/{appId}/{path}'].get.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name), ['appId', 'path']);
  const requestSmsCode = response.body.paths['/1.1/requestSmsCode'].post;
  assert.equal(requestSmsCode.requestBody.content['application/json'].schema.type, 'object');
  assert.deepEqual(requestSmsCode.responses['400'].content['application/json'].examples.incorrectType.value, {
    code: 111,
    error: 'ttl must be 1 to 30 minutes.',
  });
});

/** Routes that read no parameter, query or body: nothing to declare. */
const takesNoInput = new Set([
  'GET /openapi.json',
  'GET /docs/api',
  'GET /health',
  'GET /health/live',
  'GET /health/ready',
  'GET /1.1/date',
  'GET /metrics',
  'GET /1.1/settings',
  'GET /1.1/schemas',
  'GET /1.1/scheduledPushMessages',
  'GET /console',
  'GET /console/sign-in',
  'GET /console/apps',
  'GET /console/audit',
  'GET /console/api/session',
  'GET /console/api/apps',
  'GET /console/api/audit',
  'GET /console/api/operators',
]);

test('every route, the console\'s included, declares a schema, unless it reads no input', () => {
  const routes = server.services.routes;
  assert.ok(routes.filter((route) => route.url.startsWith('/console')).length > 60);
  assert.ok(routes.length > 130);
  const undeclared = routes.filter((route) => route.schema === undefined).map((route) => `${route.method} ${route.url}`);
  assert.deepEqual(undeclared.filter((route) => !takesNoInput.has(route)), []);
  // The list above names only routes that exist and have no schema.
  assert.deepEqual([...takesNoInput].filter((route) => !undeclared.includes(route)), []);
});

test('every route\'s schemas compile (routes compile theirs on first use, so a broken one would not fail the start)', () => {
  const parts = ['body', 'querystring', 'params', 'headers'] as const;
  let compiled = 0;
  for (const route of server.services.routes) {
    for (const part of parts) {
      const schema = (route.schema as Record<string, SchemaObject | undefined> | undefined)?.[part];
      if (!schema) continue;
      assert.doesNotThrow(() => compileSchema(schema), `${route.method} ${route.url} ${part}`);
      compiled++;
    }
  }
  assert.ok(compiled > 150, `${compiled} schemas`);
});

/**
 * "Reachable" here: each catalogue error the document names (its code with its exact message) is
 * asserted by some test: the message is written in a test file, or the test names the catalogue entry.
 */
test('every catalogue error named in the document is asserted by some test', async () => {
  const sources = readdirSync('test', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => readFileSync(join('test', name), 'utf8'))
    .join('\n');
  const document = (await server.client.request('GET', '/openapi.json')).body;
  const named = new Set<string>();
  for (const operations of Object.values(document.paths) as Array<Record<string, { responses: Record<string, { content?: Record<string, { examples: Record<string, { value: { code: number; error: string } }> }> }> }>>) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses)) {
        for (const { value } of Object.values(response.content?.['application/json']?.examples ?? {})) named.add(JSON.stringify(value));
      }
    }
  }
  assert.ok(named.size >= 3);
  for (const entry of named) {
    const { code, error } = JSON.parse(entry) as { code: number; error: string };
    const kinds = (Object.keys(catalogue) as ErrorKind[]).filter((kind) => catalogue[kind].code === code);
    assert.ok(kinds.length > 0, `code ${code} is not in the catalogue`);
    // A message naming a parameter ("option '{additionalProperty}'") matches any value there.
    const pattern = new RegExp(error.split(/\{\w+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\'"`]+'));
    const asserted = pattern.test(sources) || sources.includes(JSON.stringify(error).slice(1, -1)) || kinds.some((kind) => catalogue[kind].message === error && sources.includes(`catalogue.${kind}`));
    assert.ok(asserted, `no test asserts ${entry}`);
  }
});

test('GET /docs/api is the document rendered as HTML on the server: every operation and its errors, nothing run or loaded', async () => {
  const response = await fetch(`${server.url}/docs/api`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  const page = await response.text();
  const document = (await server.client.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations)) {
      assert.ok(page.includes(`<span class="m">${method}</span> <code>${path}</code>`), `${method} ${path} is not on the page`);
    }
  }
  assert.ok(page.includes('400 <code>{"code": 111, "error": &#34;ttl must be 1 to 30 minutes.&#34;}</code>'), 'an error example of requestSmsCode');
  assert.doesNotMatch(page, /<script|(src|href)="(https?:)?\/\//);
});

test('a schema failure answers the catalogue error the schema names, and nothing is coerced', async () => {
  const phone = uniquePhone();
  for (const ttl of [0, 31, 1.5, '5', true, {}]) {
    const response = await server.client.request('POST', '/1.1/requestSmsCode', { body: { mobilePhoneNumber: phone, ttl } });
    assert.deepEqual([response.status, response.body], [400, { code: 111, error: 'ttl must be 1 to 30 minutes.' }], `ttl ${JSON.stringify(ttl)}`);
  }
  for (const body of [[], 'text', 12]) {
    const response = await server.client.request('POST', '/1.1/requestLoginSmsCode', { body });
    assert.deepEqual([response.status, response.body], [400, { code: 107, error: catalogue.invalidJson.message }], JSON.stringify(body));
  }
  const empty = await server.client.request('POST', '/1.1/usersByMobilePhone', { raw: '', headers: { 'content-type': 'application/json' } });
  assert.deepEqual([empty.status, empty.body], [400, { code: 107, error: catalogue.invalidJson.message }]);
  // The session is asked for before the body is read.
  const anonymous = await server.client.request('POST', '/1.1/requestChangePhoneNumber', { body: { ttl: 0 } });
  assert.deepEqual([anonymous.status, anonymous.body], [403, { code: 206, error: catalogue.sessionMissing.message }]);
});

test('POST /1.1/push: the schema answers body faults in the order the domain did, after who may push', async () => {
  const cases: Array<[unknown, number, number, string]> = [
    [[], 400, 107, catalogue.invalidJson.message],
    [{ cql: 'select * from _Installation', data: 5 }, 400, 102, 'cql is not supported for push: select installations with where.'],
    [{ where: {} }, 400, 113, 'A push needs "data".'],
    [{ data: [] }, 400, 111, 'data must be a JSON object.'],
    [{ data: { alert: 5 } }, 400, 111, 'data.alert must be a string (or an APNs alert object).'],
    [{ data: { alert: 'hi', title: null } }, 400, 111, 'data.title must be a string.'],
    [{ data: { alert: 'hi', silent: 'true' } }, 400, 111, 'data.silent must be true or false.'],
  ];
  for (const [body, status, code, error] of cases) {
    const response = await server.master.request('POST', '/1.1/push', { body });
    assert.deepEqual([response.status, response.body], [status, { code, error }], JSON.stringify(body));
  }
  const client = await server.client.request('POST', '/1.1/push', { body: [] });
  assert.deepEqual([client.status, client.body], [403, { code: 403, error: 'Push needs the master key (or the app setting clientPushAllowed).' }]);
  const sent = await server.master.request('POST', '/1.1/push', { body: { data: { alert: 'hi', title: 't', silent: false } } });
  assert.equal(sent.status, 201);
});

test('PUT /1.1/users/<id>/updatePassword: old_password from the schema, the session asked first', async () => {
  const user = await signUp(server.client);
  const path = `/1.1/users/${user.objectId}/updatePassword`;
  const missing = { code: 201, error: 'old_password is missing or empty.' };
  for (const [body, expected] of [
    [{ new_password: 'n3w-Passw0rd' }, missing],
    [{ old_password: '', new_password: 'n3w-Passw0rd' }, missing],
    [{ old_password: 7, new_password: 'n3w-Passw0rd' }, missing],
    ['text', { code: 107, error: catalogue.invalidJson.message }],
  ] as const) {
    const response = await server.client.request('PUT', path, { body, session: user.sessionToken });
    assert.deepEqual([response.status, response.body], [400, expected], JSON.stringify(body));
  }
  const anonymous = await server.client.request('PUT', path, { body: 'text' });
  assert.deepEqual([anonymous.status, anonymous.body], [403, { code: 206, error: catalogue.sessionMissing.message }]);
  const changed = await server.client.request('PUT', path, { body: { old_password: user.password, new_password: 'n3w-Passw0rd' }, session: user.sessionToken });
  assert.equal(changed.status, 200);
});

test('requestEmailVerify and requestPasswordReset: {email} from the schema, its form from the domain', async () => {
  const missing = { code: 204, error: catalogue.emailMissing.message };
  const invalid = { code: 125, error: catalogue.invalidEmail.message };
  for (const path of ['/1.1/requestEmailVerify', '/1.1/requestPasswordReset']) {
    for (const [body, expected] of [
      [{}, missing],
      [{ email: null }, missing],
      [{ email: '' }, missing],
      [{ email: 5 }, invalid],
      [{ email: ['a@example.com'] }, invalid],
      [{ email: 'not an address' }, invalid],
      [['a@example.com'], { code: 107, error: catalogue.invalidJson.message }],
      [{ email: 'nobody@example.com' }, { code: 205, error: catalogue.emailNotFound.message }],
    ] as const) {
      const response = await server.client.request('POST', path, { body });
      assert.deepEqual([response.status, response.body], [400, expected], `${path} ${JSON.stringify(body)}`);
    }
  }
});

test('GET /v1/route: appId from the query schema (missing or empty 113, not an app id 401)', async () => {
  const missing = { code: 113, error: 'appId is required.' };
  const unauthorized = { code: 401, error: catalogue.unauthorized.message };
  for (const [query, status, expected] of [
    ['', 400, missing],
    ['?appId=', 400, missing],
    ['?appId=a&appId=b', 401, unauthorized],
    ['?appId=no%20such', 401, unauthorized],
    [`?appId=${'a'.repeat(65)}`, 401, unauthorized],
  ] as const) {
    const response = await fetch(`${server.url}/v1/route${query}`);
    assert.deepEqual([response.status, await response.json()], [status, expected], query);
  }
  const known = await fetch(`${server.url}/v1/route?appId=${server.appId}`);
  assert.equal(known.status, 200);
});

test('POST /1.1/indexes/<class>: the body from the schema, in the old order, after the master key and the class name', async () => {
  const needsKeys = 'The index needs keys: {"field": 1 or -1}, 8 at most.';
  const cases: Array<[unknown, string]> = [
    [[], catalogue.invalidIndex.message],
    [{ name: 'a', keys: { x: 1 }, sparse: true }, "Unknown index option 'sparse'."],
    [{ keys: { x: 1 } }, 'The index needs a name.'],
    [{ name: 5, keys: 'x' }, 'The index needs a name.'],
    [{ name: 'byX' }, needsKeys],
    [{ name: 'byX', keys: {} }, needsKeys],
    [{ name: 'byX', keys: Object.fromEntries([...'abcdefghi'].map((k) => [k, 1])) }, needsKeys],
    [{ name: 'byX', keys: { x: 1 }, unique: 'yes' }, 'unique is true or false.'],
    [{ name: '9x', keys: { x: 1 } }, "Invalid index name '9x': a letter, then letters, digits or _ (64 at most)."],
    [{ name: 'byX', keys: { x: 2 } }, "The direction of 'x' is 1 or -1."],
  ];
  for (const [body, error] of cases) {
    const response = await server.master.request('POST', '/1.1/indexes/Scored', { body });
    assert.deepEqual([response.status, response.body], [400, { code: 1, error }], JSON.stringify(body));
  }
  const client = await server.client.request('POST', '/1.1/indexes/Scored', { body: [] });
  assert.deepEqual([client.status, client.body], [403, { code: 403, error: catalogue.masterKeyRequired.message }]);
  const badClass = await server.master.request('POST', '/1.1/indexes/9bad', { body: [] });
  assert.deepEqual([badClass.status, badClass.body.code], [400, 103]);
  const made = await server.master.request('POST', '/1.1/indexes/Scored', { body: { name: 'byX', keys: { x: -1 }, unique: false } });
  assert.equal(made.status, 201);
});

test('fileTokens, fileCallback and external files take a JSON object (107 otherwise)', async () => {
  for (const path of ['/1.1/fileTokens', '/1.1/fileCallback', '/1.1/files']) {
    for (const body of [[], 'a.txt', null]) {
      const response = await server.client.request('POST', path, { body });
      assert.deepEqual([response.status, response.body], [400, { code: 107, error: catalogue.invalidJson.message }], `${path} ${JSON.stringify(body)}`);
    }
  }
});

test('console routes: the schema refuses as the console refuses, after who may change anything', async () => {
  const { ada, vic } = await adminAndViewer(server.url, server.services.operators);
  const notText = { code: 111, error: 'name must be a string.' };
  const made = await ada.change('POST', '/console/api/apps', { name: 5 });
  assert.deepEqual([made.status, made.body], [400, notText]);
  const array = await ada.change('POST', '/console/api/apps', ['app']);
  assert.deepEqual([array.status, array.body], [400, { code: 107, error: catalogue.invalidJson.message }]);
  // A browser is answered a page, as for any refusal of the console.
  const page = await ada.request('POST', '/console/apps', { json: { name: 5 }, headers: { 'x-csrf-token': ada.csrf, accept: 'text/html' } });
  assert.equal(page.status, 400);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.ok(page.text.includes('name must be a string.'));
  // Who may change anything is answered before what the change says.
  const viewer = await vic.change('POST', '/console/api/apps', { name: 5 });
  assert.deepEqual([viewer.status, viewer.body], [403, { code: 403, error: 'A viewer cannot change anything.' }]);
  const noToken = await ada.request('POST', '/console/api/apps', { json: { name: 5 } });
  assert.deepEqual([noToken.status, noToken.body], [403, { code: 403, error: 'The CSRF token is missing or wrong: reload the page.' }]);
  const action = await ada.change('POST', `/console/api/apps/${server.appId}/users/u1/promote`);
  assert.deepEqual([action.status, action.body], [404, { code: 404, error: catalogue.routeNotFound.message }]);
  const code = await ada.change('POST', '/console/api/account/totp/confirm', { code: 123456 });
  assert.deepEqual([code.status, code.body], [400, { code: 111, error: 'code must be a string.' }]);
  // A page's own form sends text, which no console schema refuses.
  const form = await ada.request('POST', '/console/apps', { form: { _csrf: ada.csrf, name: 'From a form' } });
  assert.equal(form.status, 201);
});

test('the document marks console routes: pages take forms and answer HTML, /console/api takes and answers JSON', async () => {
  const { paths } = (await server.client.request('GET', '/openapi.json')).body;
  const page = paths['/console/apps/{appId}/rotate'].post;
  assert.deepEqual(page.tags, ['console']);
  assert.deepEqual(Object.keys(page.requestBody.content), ['application/x-www-form-urlencoded']);
  assert.deepEqual(Object.keys(page.responses['200'].content), ['text/html']);
  assert.deepEqual(Object.keys(paths['/console/apps/{appId}/data/{className}/import'].post.requestBody.content), ['multipart/form-data']);
  const api = paths['/console/api/apps/{appId}/rotate'].post;
  assert.deepEqual(Object.keys(api.requestBody.content), ['application/json']);
  assert.deepEqual(Object.values(api.responses['403'].content['application/json'].examples).map((e: any) => e.value.error), [
    'The request did not come from the console.',
    'The CSRF token is missing or wrong: reload the page.',
    'A viewer cannot change anything.',
  ]);
  assert.deepEqual(api.responses['401'].content['application/json'].examples.unauthorized.value, { code: 401, error: 'Sign in to the console first.' });
  assert.deepEqual(Object.keys(paths['/console/api/sign-in'].post.responses), ['200', '400', '403']);
  assert.equal(paths['/1.1/requestSmsCode'].post.tags, undefined);
});

// Browser apps (#15 point 8): the CORS answers the SDKs need from a page on another origin, the per-app
// web security domains (settings key webSecurityDomains) and GET/HEAD /1.1/date without keys.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ManualClock } from '../src/lib/clock.ts';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { roostScript } from './helpers/scripts.ts';

const run = promisify(execFile);

let server: TestServer;
let database: TestDatabase;
const clock = new ManualClock(Date.UTC(2026, 10, 26, 9, 30, 15, 42));

before(async () => {
  // The clock stays within the 15 minutes a signature may be off: the client signs with the real one.
  clock.set(Date.now());
  database = await testDatabase();
  server = await startServer({ database, clock });
});
after(async () => {
  await server?.close();
  await database?.drop();
});

const page = 'https://blog.example';
const refusal = (origin: string) => ({ code: 403, error: `Access denied by api domain white list.The request origin header is '${origin}'.` });

async function domains(list: unknown) {
  return server.master.put('/1.1/settings', { webSecurityDomains: list });
}

async function preflight(method: string, headers: string, origin = page, path = '/1.1/classes/Comment/5f1a2b3c4d5e6f7a8b9c0d1e') {
  return fetch(server.url + path, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers },
  });
}

const corsHeaders = (res: globalThis.Response) =>
  Object.fromEntries(
    ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age', 'access-control-expose-headers'].map(
      (name) => [name, res.headers.get(name)],
    ),
  );

// The wire value, as one string: what a browser reads.
const allowHeaders =
  'Content-Type, X-LC-Id, X-LC-Key, X-LC-Sign, X-LC-Session, X-LC-Prod, X-LC-UA, X-LC-Hook-Key, X-SVC-Id, X-SVC-Key, X-SVC-Sign, X-SVC-Session, X-AVOSCloud-Application-Id, X-AVOSCloud-Application-Key, X-AVOSCloud-Application-Production, X-AVOSCloud-Client-Version, X-AVOSCloud-Master-Key, X-AVOSCloud-Request-Sign, X-AVOSCloud-Session-Token, X-AVOSCloud-Super-Key, X-Requested-With, Cache-Control';

const preflightAnswer = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, POST, PUT, DELETE',
  'access-control-allow-headers': allowHeaders,
  'access-control-max-age': '86400',
  'access-control-expose-headers': 'Location',
};

describe('CORS preflight', () => {
  test('PUT and DELETE with every header the JS SDK sends (dist/av.js setHeaders) are allowed and cached for a day', async () => {
    for (const method of ['PUT', 'DELETE', 'POST', 'GET']) {
      const res = await preflight(method, 'content-type,x-lc-hook-key,x-lc-id,x-lc-prod,x-lc-session,x-lc-sign,x-lc-ua');
      assert.equal(res.status, 204, method);
      assert.equal(await res.text(), '');
      assert.deepEqual(corsHeaders(res), preflightAnswer, method);
    }
  });

  test('the legacy X-AVOSCloud-* family is allowed too', async () => {
    const res = await preflight('DELETE', 'x-avoscloud-application-id,x-avoscloud-application-key,x-avoscloud-session-token,x-avoscloud-request-sign,x-avoscloud-application-production');
    assert.equal(res.status, 204);
    assert.deepEqual(corsHeaders(res), preflightAnswer);
  });

  test('a preflight carries no application id: it is answered the same from an origin the domain list refuses', async () => {
    assert.equal((await domains(['https://shop.example'])).status, 200);
    try {
      const res = await preflight('PUT', 'content-type,x-lc-id,x-lc-sign', page);
      assert.equal(res.status, 204);
      assert.deepEqual(corsHeaders(res), preflightAnswer);
    } finally {
      await domains(null);
    }
  });
});

describe('web security domains (settings webSecurityDomains)', () => {
  test('a new application has none: every origin may call with the app key', async () => {
    assert.deepEqual((await server.master.get('/1.1/settings')).body.webSecurityDomains, []);
    const res = await server.client.post('/1.1/classes/Comment', { text: 'hi' }, { headers: { Origin: 'https://anywhere.example' } });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
  });

  test('entries are stored as browsers send Origin: lowercase, no default port, no trailing slash, each once', async () => {
    const res = await domains(['HTTPS://Blog.Example:443/', 'http://blog.example:8080', 'https://blog.example', 'https://bücher.example']);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.webSecurityDomains, ['https://blog.example', 'http://blog.example:8080', 'https://xn--bcher-kva.example']);
    assert.deepEqual((await server.master.get('/1.1/settings')).body.webSecurityDomains, res.body.webSecurityDomains);
    assert.deepEqual((await domains(null)).body.webSecurityDomains, []);
  });

  test('entries that are not origins are refused with 111 and the setting is unchanged', async () => {
    const cases: Array<[unknown, string]> = [
      ['https://blog.example', 'webSecurityDomains must be a list of origins such as "https://blog.example" or "http://blog.example:8080".'],
      [[42], 'webSecurityDomains must be a list of origins such as "https://blog.example" or "http://blog.example:8080".'],
      [['blog.example'], 'webSecurityDomains: "blog.example" is not an origin; use origins such as "https://blog.example" or "http://blog.example:8080".'],
      [['https://blog.example/comments'], 'webSecurityDomains: "https://blog.example/comments" is not an origin (scheme://host[:port], nothing after); use origins such as "https://blog.example" or "http://blog.example:8080".'],
      [['https://blog.example?x=1'], 'webSecurityDomains: "https://blog.example?x=1" is not an origin (scheme://host[:port], nothing after); use origins such as "https://blog.example" or "http://blog.example:8080".'],
      [['https://me@blog.example'], 'webSecurityDomains: "https://me@blog.example" is not an origin (scheme://host[:port], nothing after); use origins such as "https://blog.example" or "http://blog.example:8080".'],
      [['ftp://blog.example'], 'webSecurityDomains: "ftp://blog.example" is not an origin (scheme://host[:port], nothing after); use origins such as "https://blog.example" or "http://blog.example:8080".'],
      [['https://*.blog.example'], 'webSecurityDomains: "https://*.blog.example" has a wildcard; list each origin exactly.'],
      [Array.from({ length: 101 }, (_, i) => `https://s${i}.example`), 'webSecurityDomains holds at most 100 origins.'],
    ];
    for (const [value, error] of cases) {
      const res = await domains(value);
      assert.deepEqual([res.status, res.body], [400, { code: 111, error }], JSON.stringify(value).slice(0, 80));
    }
    assert.deepEqual((await server.master.get('/1.1/settings')).body.webSecurityDomains, []);
  });

  test('only the master key changes the list', async () => {
    const res = await server.client.put('/1.1/settings', { webSecurityDomains: ['https://evil.example'] });
    assert.deepEqual([res.status, res.body], [403, { code: 403, error: 'Forbidden: this operation needs the master key.' }]);
  });

  describe('with a list set', () => {
    before(async () => {
      assert.equal((await domains(['https://blog.example', 'http://blog.example:8080'])).status, 200);
    });
    after(async () => {
      await domains(null);
    });

    test('an origin on the list is served: create, update, delete', async () => {
      const headers = { Origin: page };
      const created = await server.client.post('/1.1/classes/Comment', { views: 1 }, { headers });
      assert.equal(created.status, 201);
      const updated = await server.client.put(`/1.1/classes/Comment/${created.body.objectId}`, { views: 2 }, { headers });
      assert.equal(updated.status, 200);
      const deleted = await server.client.delete(`/1.1/classes/Comment/${created.body.objectId}`, { headers });
      assert.deepEqual([deleted.status, deleted.body], [200, {}]);
      const port = await server.client.get('/1.1/classes/Comment', { headers: { Origin: 'http://blog.example:8080' } });
      assert.equal(port.status, 200);
    });

    test('any other origin gets 403 with the hosted text, readable by the page (CORS headers present)', async () => {
      for (const origin of ['https://evil.example', 'http://blog.example', 'https://blog.example:8443', 'https://www.blog.example', 'null']) {
        const res = await server.client.get('/1.1/classes/Comment', { headers: { Origin: origin } });
        assert.deepEqual([res.status, res.body], [403, refusal(origin)], origin);
        assert.equal(res.headers.get('access-control-allow-origin'), '*');
        assert.equal(res.headers.get('access-control-expose-headers'), 'Location');
      }
      const put = await server.client.put('/1.1/classes/Comment/5f1a2b3c4d5e6f7a8b9c0d1e', { views: 9 }, { headers: { Origin: 'https://evil.example' } });
      assert.deepEqual([put.status, put.text], [403, `{"code":403,"error":"Access denied by api domain white list.The request origin header is 'https://evil.example'."}`]);
    });

    test('the legacy headers and X-LC-Key are refused alike; a wrong key is still 401', async () => {
      const legacy = await fetch(server.url + '/1.1/classes/Comment', {
        headers: { Origin: 'https://evil.example', 'X-AVOSCloud-Application-Id': server.appId, 'X-AVOSCloud-Application-Key': server.appKey },
      });
      assert.deepEqual([legacy.status, await legacy.json()], [403, refusal('https://evil.example')]);
      const key = await fetch(server.url + '/1.1/classes/Comment', { headers: { Origin: 'https://evil.example', 'X-LC-Id': server.appId, 'X-LC-Key': server.appKey } });
      assert.deepEqual([key.status, await key.json()], [403, refusal('https://evil.example')]);
      const wrong = await fetch(server.url + '/1.1/classes/Comment', { headers: { Origin: 'https://evil.example', 'X-LC-Id': server.appId, 'X-LC-Key': 'wrong' } });
      assert.deepEqual([wrong.status, await wrong.json()], [401, { code: 401, error: 'Unauthorized.' }]);
    });

    test('pages on the developer machine are always served, on any port and scheme', async () => {
      for (const origin of ['http://localhost', 'http://localhost:5173', 'https://localhost:8443', 'http://127.0.0.1:3000', 'http://[::1]:8080']) {
        const res = await server.client.get('/1.1/classes/Comment', { headers: { Origin: origin } });
        assert.equal(res.status, 200, origin);
      }
      const lookalike = await server.client.get('/1.1/classes/Comment', { headers: { Origin: 'http://localhost.evil.example' } });
      assert.deepEqual([lookalike.status, lookalike.body], [403, refusal('http://localhost.evil.example')]);
    });

    test('requests without Origin (native apps, servers) and master-key requests are not checked', async () => {
      const native = await server.client.get('/1.1/classes/Comment');
      assert.equal(native.status, 200);
      const master = await server.master.get('/1.1/classes/Comment', { headers: { Origin: 'https://evil.example' } });
      assert.equal(master.status, 200);
      const settings = await server.master.get('/1.1/settings', { headers: { Origin: 'https://evil.example' } });
      assert.deepEqual(settings.body.webSecurityDomains, ['https://blog.example', 'http://blog.example:8080']);
    });

    test('batch is refused as a whole', async () => {
      const res = await server.client.post(
        '/1.1/batch',
        { requests: [{ method: 'POST', path: '/1.1/classes/Comment', body: { views: 1 } }] },
        { headers: { Origin: 'https://evil.example' } },
      );
      assert.deepEqual([res.status, res.body], [403, refusal('https://evil.example')]);
    });

    test('/1.1/date needs no key and is never refused', async () => {
      const res = await fetch(server.url + '/1.1/date', { headers: { Origin: 'https://evil.example' } });
      assert.equal(res.status, 200);
    });
  });
});

describe('GET and HEAD /1.1/date', () => {
  test('answer the server clock without any key, ISO with milliseconds', async () => {
    clock.set(Date.UTC(2026, 10, 26, 9, 30, 15, 42));
    try {
      const res = await fetch(server.url + '/1.1/date', { headers: { Origin: page } });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), '{"__type":"Date","iso":"2026-11-26T09:30:15.042Z"}');
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      const head = await fetch(server.url + '/1.1/date', { method: 'HEAD' });
      assert.deepEqual([head.status, await head.text(), head.headers.get('content-type')], [200, '', 'application/json; charset=utf-8']);
      // Keys, even wrong ones, change nothing.
      const keyed = await fetch(server.url + '/1.1/date', { headers: { 'X-LC-Id': 'nobody', 'X-LC-Key': 'wrong' } });
      assert.deepEqual([keyed.status, await keyed.json()], [200, { __type: 'Date', iso: '2026-11-26T09:30:15.042Z' }]);
      const preflighted = await preflight('GET', 'x-lc-id,x-lc-sign,x-lc-ua', page, '/1.1/date');
      assert.deepEqual([preflighted.status, corsHeaders(preflighted)], [204, preflightAnswer]);
    } finally {
      clock.set(Date.now());
    }
  });
});

describe('roost app settings --set webSecurityDomains', () => {
  const roost = (...args: string[]) =>
    run(process.execPath, [...roostScript('cli'), ...args], {
      env: { ...process.env, ...database.env, DATABASE_URL: database.env.DATABASE_URL ?? '' },
    });

  test('sets the list the running server then applies; a bad entry exits 1 with the reason', async () => {
    const shown = JSON.parse((await roost('app', 'settings', server.appId, '--set', 'webSecurityDomains=["https://Blog.Example:443"]')).stdout);
    assert.deepEqual(shown.webSecurityDomains, ['https://blog.example']);
    // The server trusts its cached copy of the application for APP_CACHE_MS (1 s).
    clock.advance(2000);
    const refused = await server.client.get('/1.1/classes/Comment', { headers: { Origin: 'https://evil.example' } });
    assert.deepEqual([refused.status, refused.body], [403, refusal('https://evil.example')]);
    assert.equal((await server.client.get('/1.1/classes/Comment', { headers: { Origin: page } })).status, 200);
    await assert.rejects(roost('app', 'settings', server.appId, '--set', 'webSecurityDomains=["blog.example"]'), (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr, /"blog\.example" is not an origin/);
      return true;
    });
    JSON.parse((await roost('app', 'settings', server.appId, '--set', 'webSecurityDomains=null')).stdout);
    clock.advance(2000);
    assert.equal((await server.client.get('/1.1/classes/Comment', { headers: { Origin: 'https://evil.example' } })).status, 200);
  });
});

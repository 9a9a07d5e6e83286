// $nearSphere pages answered from a statement compiled for another near page of the same shape (page-shapes.ts,
// geo.ts walkNear: the box's bands, latitudes and longitudes, cos φ and the bounds' sin² are the shape's values)
// answer exactly as the page compiled afresh. As in objects-page-shapes.test.ts, a page's limit is part of its
// shape: each page is asked at a shared limit after other pages of its kind (so from the recipe one of them taught)
// and at a limit of its own (built afresh), near the poles, across the antimeridian, in boxes read as a range of
// bands, with a minimum distance, unbounded (pages of growing radius), and as users whose pages differ.
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

const point = (latitude: number, longitude: number) => ({ __type: 'GeoPoint', latitude, longitude });

/** Points scattered about each centre, within about `spread` degrees (a fixed sequence: the same every run). */
function around(centres: Array<[number, number]>, perCentre: number, spread: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let seed = 7;
  const next = () => ((seed = (seed * 48271) % 2147483647) / 2147483647) * 2 - 1;
  for (const [latitude, longitude] of centres) {
    for (let i = 0; i < perCentre; i++) {
      const lat = Math.max(-90, Math.min(90, latitude + next() * spread));
      let lng = longitude + next() * spread;
      if (lng > 180) lng -= 360;
      if (lng < -180) lng += 360;
      out.push([lat, lng]);
    }
  }
  return out;
}

test('near pages from a shape learnt on other points answer as pages built afresh', async () => {
  const signUp = async (username: string) => (await server.client.post('/1.1/users', { username, password: 'pw-near' })).body as { objectId: string; sessionToken: string };
  const [ann, bob] = [await signUp('near-ann'), await signUp('near-bob')];
  const acls = [{ '*': { read: true } }, { [ann.objectId]: { read: true } }, { [bob.objectId]: { read: true } }, { '*': { read: true } }];
  const centres: Array<[number, number]> = [[31.2, 121.5], [89.9995, 10], [-89.9998, -40], [0.5, 179.9995], [-12, -179.9998], [45, 7]];
  const places = around(centres, 40, 0.05);
  for (const [i, [latitude, longitude]] of places.entries()) {
    const made = await server.master.post('/1.1/classes/NearShaped', { n: i, at: point(latitude, longitude), ACL: acls[i % acls.length] });
    assert.equal(made.status, 201, made.text);
  }
  const users = [null, ann, bob];
  const ask = async (user: { sessionToken: string } | null, where: unknown, limit: number) => {
    const response = await server.client.withSession(user?.sessionToken).get('/1.1/classes/NearShaped', { query: { where, limit } });
    assert.equal(response.status, 200, response.text);
    return response.text;
  };
  const bounds: Array<Record<string, number>> = [
    { $maxDistanceInKilometers: 0.5 },
    { $maxDistanceInKilometers: 2 },
    { $maxDistanceInKilometers: 5 },
    { $maxDistanceInKilometers: 150 }, // a box taller than 64 bands: read as their range
    { $maxDistanceInKilometers: 5, $minDistanceInKilometers: 1 },
    { $minDistanceInKilometers: 1 },
    {}, // unbounded: pages of growing radius, each a bounded shape
  ];
  // Each centre, and points just off it (the same number of bands, mostly: the recipe of the one before).
  const asked = centres.flatMap(([latitude, longitude]) => [[latitude, longitude], [latitude - 0.0003, longitude + 0.0002], [latitude + 0.00041, longitude - 0.00013]]);
  // Limits past the class's 240 objects, so a page's answer is the same at any of them.
  const shared = 300;
  let fresh = 500;
  let held = 0;
  for (const bound of bounds) {
    for (const [u, user] of users.entries()) {
      for (const [latitude, longitude] of asked) {
        const where = { at: { $nearSphere: point(Math.max(-90, Math.min(90, latitude)), longitude), ...bound } };
        const cached = await ask(user, where, shared);
        const built = await ask(user, where, fresh++);
        assert.ok(cached === built, `${JSON.stringify(where)} as ${u}: ${cached.length} bytes from the recipe, ${built.length} built`);
        if (JSON.parse(cached).results.length > 1) held++;
      }
    }
  }
  // The comparisons above compare pages that hold objects, and users see different ones.
  assert.ok(held > 100, `${held} pages held objects`);
  const seen = await Promise.all(users.map((user) => ask(user, { at: { $nearSphere: point(31.2, 121.5), $maxDistanceInKilometers: 20 } }, shared)));
  assert.equal(new Set(seen).size, users.length);
});

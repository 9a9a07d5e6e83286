// Geo queries (issue #16 point 5) through the official JavaScript SDK (npm leancloud-storage): AV.GeoPoint
// values saved and read back, Query#near (nearest first), withinKilometers / withinMiles / withinRadians
// ($maxDistance in radians, the SDK's Earth radius 6371.0 km / 3958.8 mi), withinGeoBox ($within $box);
// the SDK's own distances (GeoPoint#kilometersTo) agree with the answers' order and bounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { sdkServer } from './helpers/sdk.ts';

sdkServer();

// Around Shanghai, and one across the antimeridian.
const places: Array<[string, number, number]> = [
  ['bund', 31.2400, 121.4900],
  ['pudong', 31.2304, 121.4737],
  ['hongqiao', 31.1979, 121.3363],
  ['suzhou', 31.2990, 120.5853],
  ['hangzhou', 30.2741, 120.1551],
  ['beijing', 39.9042, 116.4074],
  ['fiji', -17.7134, 178.0650],
  ['samoa', -13.7590, -172.1046],
];
const center = new AV.GeoPoint(31.2304, 121.4737);
const names = (objects: unknown[]) => (objects as AV.Object[]).map((o) => o.get('name') as string);

let seeded: Promise<unknown> | undefined;
/** Saves the places once (the SDK is pointed at the server only when the tests run). */
const seed = () =>
  (seeded ??= AV.Object.saveAll(places.map(([name, latitude, longitude]) => new AV.Object('SdkPlace', { name, location: new AV.GeoPoint(latitude, longitude) }))));

test('a saved AV.GeoPoint reads back as one (the recorded "save object with geopoints" and "near")', async () => {
  const post = await new AV.Object('SdkGeoPost', { title: 'Post Geopoints', location: new AV.GeoPoint({ latitude: 40.0, longitude: -30.0 }) }).save();
  const [found] = await new AV.Query('SdkGeoPost').near('location', post.get('location')).limit(10).find();
  const location = found.get('location') as AV.GeoPoint;
  assert.ok(location instanceof AV.GeoPoint);
  assert.deepEqual([location.latitude, location.longitude], [40, -30]);
  assert.equal(found.id, post.id);
});

test('Query#near answers nearest first, as GeoPoint#kilometersTo orders them', async () => {
  await seed();
  const found = (await new AV.Query('SdkPlace').near('location', center).find()) as AV.Object[];
  const expected = [...places]
    .sort((a, b) => center.kilometersTo(new AV.GeoPoint(a[1], a[2])) - center.kilometersTo(new AV.GeoPoint(b[1], b[2])))
    .map(([name]) => name);
  assert.deepEqual(names(found), expected);
  assert.deepEqual(names(await new AV.Query('SdkPlace').near('location', center).skip(1).limit(2).find()), expected.slice(1, 3));
});

test('withinKilometers, withinMiles and withinRadians bound the distance', async () => {
  await seed();
  const within = (build: (q: AV.Query<AV.Object>) => AV.Query<AV.Object>) => build(new AV.Query('SdkPlace')).find().then(names);
  assert.deepEqual(await within((q) => q.withinKilometers('location', center, 20)), ['pudong', 'bund', 'hongqiao']);
  assert.deepEqual(await within((q) => q.withinMiles('location', center, 60)), ['pudong', 'bund', 'hongqiao', 'suzhou']);
  assert.deepEqual(await within((q) => q.withinRadians('location', center, 200 / 6371)), ['pudong', 'bund', 'hongqiao', 'suzhou', 'hangzhou']);
  assert.deepEqual(await within((q) => q.withinKilometers('location', center, 20).descending('name')), ['pudong', 'hongqiao', 'bund']);
  assert.equal(await new AV.Query('SdkPlace').withinKilometers('location', center, 20).count(), 3);
  // Fiji to Samoa across the antimeridian: about 1,150 km.
  const fiji = new AV.GeoPoint(-17.7134, 178.065);
  assert.deepEqual(await within((q) => q.withinKilometers('location', fiji, 1500)), ['fiji', 'samoa']);
});

test('withinGeoBox ($within $box), also across the antimeridian', async () => {
  await seed();
  const box = (sw: [number, number], ne: [number, number]) =>
    new AV.Query('SdkPlace').withinGeoBox('location', new AV.GeoPoint(...sw), new AV.GeoPoint(...ne)).ascending('name').find().then(names);
  assert.deepEqual(await box([31, 121], [32, 122]), ['bund', 'hongqiao', 'pudong']);
  assert.deepEqual(await box([30, 120], [40, 122]), ['bund', 'hangzhou', 'hongqiao', 'pudong', 'suzhou']);
  assert.deepEqual(await box([-20, 170], [-10, -170]), ['fiji', 'samoa']);
});

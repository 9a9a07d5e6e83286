// Class schemas through the official JavaScript SDK (leancloud-storage): a save of another type than the
// field's fails with code 111 and the hosted text, alone and in saveAll; a column default comes back on a
// fetchWhenSave create, as the SDK's own suite expects of the hosted test app.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { rejection, sdkServer } from './helpers/sdk.ts';

const server = sdkServer();

test('saving another type than the field has fails with 111 and the hosted text', async () => {
  const obj = new AV.Object('SdkTyped');
  obj.set('flag', true);
  await obj.save();
  obj.set('flag', 'string');
  const failed = await rejection(obj.save());
  assert.deepEqual([failed.code, failed.message], [111, `Invalid value type for field 'flag',expect type is {:type "Boolean"},but it is '{:type "String"}'.`]);
  const again = await new AV.Query('SdkTyped').get(obj.id as string);
  assert.equal(again.get('flag'), true);
  // saveAll sends a batch: the one object fails alone with the same code.
  const fresh = new AV.Object('SdkTyped');
  fresh.set('flag', false);
  const wrong = new AV.Object('SdkTyped');
  wrong.set('flag', 1);
  const batch = (await rejection(AV.Object.saveAll([fresh, wrong]))) as { code: number; message: string; results?: unknown[] };
  assert.equal(batch.code, 111);
  assert.ok(fresh.id, 'the other object of the batch is saved');
  // null is allowed on any type, and unset sends Delete.
  obj.set('flag', null);
  await obj.save();
  obj.unset('flag');
  await obj.save();
});

test('a column default comes back on a create with fetchWhenSave, and on reads', async () => {
  const set = await server().master.put('/1.1/schemas/SdkPerson', { company: { default: 'leancloud' } });
  assert.equal(set.status, 200);
  const person = new AV.Object('SdkPerson');
  person.set('name', 'ann');
  await person.save(null, { fetchWhenSave: true });
  assert.equal(person.get('company'), 'leancloud');
  const read = await new AV.Query('SdkPerson').get(person.id as string);
  assert.deepEqual([read.get('name'), read.get('company')], ['ann', 'leancloud']);
});

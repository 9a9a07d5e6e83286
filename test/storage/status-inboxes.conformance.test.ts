// Conformance of StatusInboxStore (src/storage/status-inbox-store.ts) through its verbs, on the database this
// run selects: numbering per inbox (also when two deliveries race), pages, counts, reads and removals.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { unique, useStore } from './stores.ts';

const store = useStore();

describe('StatusInboxStore', () => {
  test('each inbox numbers its entries from 1; pages come newest first within sinceId and maxId', async () => {
    const inboxes = store().statusInboxes;
    const appId = unique('app');
    await inboxes.deliver(appId, 's1', 'default', ['u1', 'u2', 'u1']);
    await inboxes.deliver(appId, 's2', 'default', ['u1']);
    await inboxes.deliver(appId, 's3', 'private', ['u1']);
    const u1 = { appId, owner: 'u1', inboxType: 'default' };
    assert.deepEqual(await inboxes.page(u1, { sinceId: 0, maxId: 0, limit: 10 }), [{ messageId: 2, statusId: 's2' }, { messageId: 1, statusId: 's1' }]);
    assert.deepEqual(await inboxes.page(u1, { sinceId: 1, maxId: 0, limit: 10 }), [{ messageId: 2, statusId: 's2' }]);
    assert.deepEqual(await inboxes.page(u1, { sinceId: 0, maxId: 1, limit: 10 }), [{ messageId: 1, statusId: 's1' }]);
    assert.deepEqual(await inboxes.page(u1, { sinceId: 0, maxId: 0, limit: 1 }), [{ messageId: 2, statusId: 's2' }]);
    assert.deepEqual(await inboxes.page({ ...u1, inboxType: 'private' }, { sinceId: 0, maxId: 0, limit: 10 }), [{ messageId: 1, statusId: 's3' }]);
    assert.deepEqual(await inboxes.page({ ...u1, owner: 'u2' }, { sinceId: 0, maxId: 0, limit: 10 }), [{ messageId: 1, statusId: 's1' }]);
    assert.deepEqual(await inboxes.page({ ...u1, appId: unique('app') }, { sinceId: 0, maxId: 0, limit: 10 }), []);
  });

  test('two deliveries at once to the same inboxes never share a number', async () => {
    const inboxes = store().statusInboxes;
    const other = (await store.another())?.statusInboxes ?? inboxes;
    const appId = unique('app');
    const owners = Array.from({ length: 30 }, (_, i) => `u${i}`);
    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? other : inboxes).deliver(appId, `s${i}`, 'default', owners)));
    for (const owner of ['u0', 'u29']) {
      const page = await inboxes.page({ appId, owner, inboxType: 'default' }, { sinceId: 0, maxId: 0, limit: 10 });
      assert.deepEqual(page.map((entry) => entry.messageId), [6, 5, 4, 3, 2, 1]);
      assert.equal(new Set(page.map((entry) => entry.statusId)).size, 6);
    }
  });

  test('counts: total and unread above what was read; markRead never moves back', async () => {
    const inboxes = store().statusInboxes;
    const appId = unique('app');
    const inbox = { appId, owner: 'u', inboxType: 'default' };
    assert.deepEqual(await inboxes.count(inbox), { total: 0, unread: 0 });
    for (const id of ['a', 'b', 'c']) await inboxes.deliver(appId, id, 'default', ['u']);
    assert.deepEqual(await inboxes.count(inbox), { total: 3, unread: 3 });
    await inboxes.markRead(inbox, 2);
    assert.deepEqual(await inboxes.count(inbox), { total: 3, unread: 1 });
    await inboxes.markRead(inbox, 1);
    assert.deepEqual(await inboxes.count(inbox), { total: 3, unread: 1 });
    await inboxes.markRead(inbox, null);
    assert.deepEqual(await inboxes.count(inbox), { total: 3, unread: 0 });
  });

  test('removing an entry, or a status from every inbox', async () => {
    const inboxes = store().statusInboxes;
    const appId = unique('app');
    await inboxes.deliver(appId, 'keep', 'default', ['u1', 'u2']);
    await inboxes.deliver(appId, 'gone', 'default', ['u1', 'u2']);
    const u1 = { appId, owner: 'u1', inboxType: 'default' };
    assert.equal(await inboxes.removeEntry(u1, 1), true);
    assert.equal(await inboxes.removeEntry(u1, 1), false);
    await inboxes.removeStatus(appId, 'gone');
    assert.deepEqual(await inboxes.page(u1, { sinceId: 0, maxId: 0, limit: 10 }), []);
    assert.deepEqual(await inboxes.page({ ...u1, owner: 'u2' }, { sinceId: 0, maxId: 0, limit: 10 }), [{ messageId: 1, statusId: 'keep' }]);
    // Numbers are never reused: the next entry follows the last one given.
    await inboxes.deliver(appId, 'next', 'default', ['u1']);
    assert.deepEqual(await inboxes.page(u1, { sinceId: 0, maxId: 0, limit: 10 }), [{ messageId: 3, statusId: 'next' }]);
  });
});

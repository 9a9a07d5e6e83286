/**
 * Tables of push (src/storage/sql/push-store.ts). The same statements serve both databases:
 * JSON is kept as TEXT (read whole, never queried), flags as 0/1 integers.
 */
const statements = [
  `CREATE TABLE push_notifications (app_id TEXT NOT NULL, id TEXT NOT NULL,
     created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, status TEXT NOT NULL,
     push_time BIGINT NOT NULL, expires_at BIGINT, request TEXT NOT NULL, content TEXT NOT NULL,
     selector TEXT NOT NULL, last_key TEXT NOT NULL, pages INTEGER NOT NULL, paged INTEGER NOT NULL,
     PRIMARY KEY (app_id, id))`,
  `CREATE INDEX push_notifications_due ON push_notifications (push_time, id) WHERE paged = 0`,
  `CREATE INDEX push_notifications_list ON push_notifications (app_id, created_at)`,
  `CREATE TABLE push_counts (app_id TEXT NOT NULL, notification_id TEXT NOT NULL, key TEXT NOT NULL,
     n BIGINT NOT NULL, PRIMARY KEY (app_id, notification_id, key))`,
  `CREATE TABLE push_pages (app_id TEXT NOT NULL, notification_id TEXT NOT NULL, seq INTEGER NOT NULL,
     done INTEGER NOT NULL, lease_until BIGINT NOT NULL, PRIMARY KEY (app_id, notification_id, seq))`,
  `CREATE INDEX push_pages_pending ON push_pages (lease_until) WHERE done = 0`,
  `CREATE TABLE push_mailbox (app_id TEXT NOT NULL, installation_id TEXT NOT NULL, notification_id TEXT NOT NULL,
     page_seq INTEGER NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT, acked_at BIGINT,
     PRIMARY KEY (app_id, installation_id, notification_id))`,
  `CREATE INDEX push_mailbox_page ON push_mailbox (app_id, notification_id, page_seq)`,
  `CREATE TABLE push_vendor_outbox (app_id TEXT NOT NULL, notification_id TEXT NOT NULL,
     installation_object_id TEXT NOT NULL, page_seq INTEGER NOT NULL, vendor TEXT NOT NULL,
     device_profile TEXT NOT NULL, registration_id TEXT NOT NULL, result TEXT, error TEXT,
     PRIMARY KEY (app_id, notification_id, installation_object_id))`,
  `CREATE INDEX push_vendor_outbox_page ON push_vendor_outbox (app_id, notification_id, page_seq)`,
  `CREATE TABLE push_req_ids (app_id TEXT NOT NULL, req_id TEXT NOT NULL, notification_id TEXT NOT NULL,
     created_at BIGINT NOT NULL, PRIMARY KEY (app_id, req_id))`,
];

export const pushMigration = { name: '0004_push', statements: { sqlite: statements, postgres: statements } };

/** Jobs still sending, for the sweep that closes jobs whose last pages finished at the same time. */
const sweep = [`CREATE INDEX push_notifications_sending ON push_notifications (app_id, id) WHERE status = 'sending'`];
export const pushSweepMigration = { name: '0005_push_sweep', statements: { sqlite: sweep, postgres: sweep } };

/**
 * A page keeps the installationIds it queued (to redeliver it after a crash), so the mailbox needs
 * no second index: a thousand-row page insert costs half as much on PostgreSQL (bench/RESULTS.md).
 */
const pageList = [`DROP INDEX push_mailbox_page`, `ALTER TABLE push_pages ADD COLUMN channel TEXT`];
export const pushPageListMigration = { name: '0006_push_page_list', statements: { sqlite: pageList, postgres: pageList } };

/**
 * Pages are claimed as key ranges (lo_key exclusive, hi_key inclusive) and routed afterwards, in
 * parallel; filled is 0 until then (pages written before this step were routed when claimed). A
 * page keeps its maker targets as it keeps its own-channel ids, so push_vendor_outbox only holds
 * the devices a maker did not take: a row per maker device was the biggest cost of a page.
 */
const pageRanges = [
  `ALTER TABLE push_pages ADD COLUMN lo_key TEXT`,
  `ALTER TABLE push_pages ADD COLUMN hi_key TEXT`,
  `ALTER TABLE push_pages ADD COLUMN filled INTEGER NOT NULL DEFAULT 1`,
  `ALTER TABLE push_pages ADD COLUMN vendor TEXT`,
  `DROP INDEX push_vendor_outbox_page`,
];
export const pushPageRangesMigration = { name: '0009_push_page_ranges', statements: { sqlite: pageRanges, postgres: pageRanges } };

import type { Migration } from './migrate.ts';

/**
 * Status inboxes (src/social/statuses.ts): a status is a `_Status` object; sending it puts one entry in
 * each recipient's inbox of its type, numbered in that inbox (`messageId`, 1, 2, …: the SDK pages by
 * sinceId/maxId). status_inbox_counters holds each inbox's last number and the last one read, so a
 * count is two numbers and an index range, and numbering a batch of inboxes is one upsert.
 */
function tables(integer: string): string[] {
  return [
    `CREATE TABLE status_inboxes (app_id TEXT NOT NULL, owner TEXT NOT NULL, inbox_type TEXT NOT NULL, message_id ${integer} NOT NULL,
       status_id TEXT NOT NULL, PRIMARY KEY (app_id, owner, inbox_type, message_id))`,
    'CREATE INDEX status_inboxes_status ON status_inboxes (app_id, status_id)',
    `CREATE TABLE status_inbox_counters (app_id TEXT NOT NULL, owner TEXT NOT NULL, inbox_type TEXT NOT NULL,
       last_id ${integer} NOT NULL, read_id ${integer} NOT NULL, PRIMARY KEY (app_id, owner, inbox_type))`,
  ];
}

export const statusInboxes: Migration = { sqlite: tables('INTEGER'), postgres: tables('BIGINT') };

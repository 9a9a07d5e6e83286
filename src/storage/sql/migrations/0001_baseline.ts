import type { Migration } from './migrate.ts';

/**
 * The whole schema as of the first release. SQLite keeps JSON as TEXT and epoch milliseconds as
 * INTEGER/BIGINT; PostgreSQL keeps the JSON it queries as JSONB and `readers` as TEXT[]. Tables
 * only ever read whole (push, SMS, identities) keep JSON as TEXT and flags as 0/1 on both.
 */

// ── Tables whose columns differ by database ─────────────────────────────────

const sqlite = [
  `CREATE TABLE apps (app_id TEXT PRIMARY KEY, name TEXT NOT NULL, app_key TEXT NOT NULL,
     master_key TEXT NOT NULL, settings TEXT NOT NULL DEFAULT '{}', created_at INTEGER NOT NULL)`,
  // Users' secrets (password_hash, session_*) live in columns no object query selects.
  `CREATE TABLE objects (app_id TEXT NOT NULL, class_name TEXT NOT NULL, id TEXT NOT NULL,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, data TEXT NOT NULL, acl TEXT,
     readers TEXT NOT NULL, username TEXT, email TEXT, mobile_phone TEXT, installation_id TEXT,
     password_hash TEXT, session_digest TEXT, session_cipher TEXT,
     PRIMARY KEY (app_id, class_name, id))`,
  `CREATE TABLE mail_tokens (digest TEXT PRIMARY KEY, kind TEXT NOT NULL, app_id TEXT NOT NULL,
     user_id TEXT NOT NULL, email TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
     used_at INTEGER)`,
  // Numbers the scheduled pushes (the outer id of /1.1/scheduledPushMessages). A row lives while its push is
  // scheduled; rows of pushes that started, were cancelled or deleted go at the application's next scheduled push.
  `CREATE TABLE push_schedule (id INTEGER PRIMARY KEY AUTOINCREMENT, app_id TEXT NOT NULL,
     notification_id TEXT NOT NULL, UNIQUE (app_id, notification_id))`,
];

const postgres = [
  `CREATE TABLE apps (app_id TEXT PRIMARY KEY, name TEXT NOT NULL, app_key TEXT NOT NULL,
     master_key TEXT NOT NULL, settings JSONB NOT NULL DEFAULT '{}', created_at BIGINT NOT NULL)`,
  `CREATE TABLE objects (app_id TEXT NOT NULL, class_name TEXT NOT NULL, id TEXT NOT NULL,
     created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, data JSONB NOT NULL, acl JSONB,
     readers TEXT[] NOT NULL, username TEXT, email TEXT, mobile_phone TEXT, installation_id TEXT,
     password_hash TEXT, session_digest TEXT, session_cipher TEXT,
     CONSTRAINT objects_pkey PRIMARY KEY (app_id, class_name, id))`,
  `CREATE TABLE mail_tokens (digest TEXT PRIMARY KEY, kind TEXT NOT NULL, app_id TEXT NOT NULL,
     user_id TEXT NOT NULL, email TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
     used_at BIGINT)`,
  `CREATE TABLE push_schedule (id BIGSERIAL PRIMARY KEY, app_id TEXT NOT NULL,
     notification_id TEXT NOT NULL, UNIQUE (app_id, notification_id))`,
];

// ── The same text on both databases ─────────────────────────────────────────

const both = [
  // The server secret (key 'secret').
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,

  // objects: the login fields and the installation id are unique per application; every class lists by time.
  `CREATE UNIQUE INDEX objects_username_key ON objects (app_id, username) WHERE username IS NOT NULL`,
  `CREATE UNIQUE INDEX objects_email_key ON objects (app_id, email) WHERE email IS NOT NULL`,
  `CREATE UNIQUE INDEX objects_mobile_phone_key ON objects (app_id, mobile_phone) WHERE mobile_phone IS NOT NULL`,
  `CREATE UNIQUE INDEX objects_installation_id_key ON objects (app_id, installation_id) WHERE installation_id IS NOT NULL`,
  `CREATE UNIQUE INDEX objects_session_digest_key ON objects (app_id, session_digest) WHERE session_digest IS NOT NULL`,
  `CREATE INDEX objects_created_idx ON objects (app_id, class_name, created_at)`,
  `CREATE INDEX objects_updated_idx ON objects (app_id, class_name, updated_at)`,

  // A user's last attempts, oldest first (at1): a fixed ring, so counting an attempt is one upsert (src/storage/sql/account-store.ts).
  `CREATE TABLE login_attempts (app_id TEXT NOT NULL, user_id TEXT NOT NULL,
     at1 BIGINT, at2 BIGINT, at3 BIGINT, at4 BIGINT, at5 BIGINT, at6 BIGINT, at7 BIGINT NOT NULL,
     PRIMARY KEY (app_id, user_id))`,

  // Third-party accounts: one binds at most one user of an application (the primary key is the unique index).
  `CREATE TABLE auth_identities (app_id TEXT NOT NULL, platform TEXT NOT NULL, uid TEXT NOT NULL,
     user_id TEXT NOT NULL, CONSTRAINT auth_identities_pkey PRIMARY KEY (app_id, platform, uid))`,
  `CREATE INDEX auth_identities_user_idx ON auth_identities (app_id, user_id)`,

  // SMS: the last send per number, every send (daily limits), the codes waiting.
  `CREATE TABLE sms_numbers (app_id TEXT NOT NULL, phone TEXT NOT NULL, last_sent_at BIGINT NOT NULL,
     PRIMARY KEY (app_id, phone))`,
  `CREATE TABLE sms_sends (app_id TEXT NOT NULL, phone TEXT NOT NULL, sent_at BIGINT NOT NULL)`,
  `CREATE INDEX sms_sends_phone_idx ON sms_sends (app_id, phone, sent_at)`,
  `CREATE TABLE sms_codes (app_id TEXT NOT NULL, phone TEXT NOT NULL, purpose TEXT NOT NULL, digest TEXT NOT NULL,
     expires_at BIGINT NOT NULL, attempts INTEGER NOT NULL, PRIMARY KEY (app_id, phone, purpose))`,
  `CREATE INDEX sms_codes_digest_idx ON sms_codes (app_id, digest)`,

  `CREATE INDEX mail_tokens_user_idx ON mail_tokens (app_id, user_id, kind, created_at)`,

  // Push (src/storage/sql/push-store.ts): a notification is a record and a job; `due` finds jobs to page,
  // `sending` the jobs the sweep may close.
  `CREATE TABLE push_notifications (app_id TEXT NOT NULL, id TEXT NOT NULL,
     created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, status TEXT NOT NULL,
     push_time BIGINT NOT NULL, expires_at BIGINT, request TEXT NOT NULL, content TEXT NOT NULL,
     selector TEXT NOT NULL, last_key TEXT NOT NULL, pages INTEGER NOT NULL, paged INTEGER NOT NULL,
     PRIMARY KEY (app_id, id))`,
  `CREATE INDEX push_notifications_due ON push_notifications (push_time, id) WHERE paged = 0`,
  `CREATE INDEX push_notifications_list ON push_notifications (app_id, created_at)`,
  `CREATE INDEX push_notifications_sending ON push_notifications (app_id, id) WHERE status = 'sending'`,
  `CREATE TABLE push_counts (app_id TEXT NOT NULL, notification_id TEXT NOT NULL, key TEXT NOT NULL,
     n BIGINT NOT NULL, PRIMARY KEY (app_id, notification_id, key))`,
  // A page is a key range of installations (lo_key exclusive, hi_key inclusive), claimed first and
  // routed (filled) afterwards, in parallel. It keeps the own-channel installationIds it queued
  // (channel) and its maker targets (vendor) as JSON, to redeliver them after a crash.
  `CREATE TABLE push_pages (app_id TEXT NOT NULL, notification_id TEXT NOT NULL, seq INTEGER NOT NULL,
     done INTEGER NOT NULL, lease_until BIGINT NOT NULL, channel TEXT, lo_key TEXT, hi_key TEXT,
     filled INTEGER NOT NULL DEFAULT 1, vendor TEXT, PRIMARY KEY (app_id, notification_id, seq))`,
  `CREATE INDEX push_pages_pending ON push_pages (lease_until) WHERE done = 0`,
  `CREATE TABLE push_mailbox (app_id TEXT NOT NULL, installation_id TEXT NOT NULL, notification_id TEXT NOT NULL,
     page_seq INTEGER NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT, acked_at BIGINT,
     PRIMARY KEY (app_id, installation_id, notification_id))`,
  // Only the devices a maker refused or failed: the ones it took leave no row.
  `CREATE TABLE push_vendor_outbox (app_id TEXT NOT NULL, notification_id TEXT NOT NULL,
     installation_object_id TEXT NOT NULL, page_seq INTEGER NOT NULL, vendor TEXT NOT NULL,
     device_profile TEXT NOT NULL, registration_id TEXT NOT NULL, result TEXT, error TEXT,
     PRIMARY KEY (app_id, notification_id, installation_object_id))`,
  `CREATE TABLE push_req_ids (app_id TEXT NOT NULL, req_id TEXT NOT NULL, notification_id TEXT NOT NULL,
     created_at BIGINT NOT NULL, PRIMARY KEY (app_id, req_id))`,
  // Daily-quota pauses of the push makers, shared by every node (deployments without Redis).
  `CREATE TABLE vendor_pauses (app_id TEXT NOT NULL, device_profile TEXT NOT NULL, vendor TEXT NOT NULL,
     until_ms BIGINT NOT NULL, reason TEXT NOT NULL, PRIMARY KEY (app_id, device_profile, vendor))`,
];

export const baseline: Migration = { sqlite: [...sqlite, ...both], postgres: [...postgres, ...both] };

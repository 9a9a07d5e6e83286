/**
 * Tables of third-party identities (src/storage/sql/identity-store.ts) and SMS codes
 * (src/storage/sql/sms-store.ts). The same statements serve both databases.
 */
const statements = [
  // One third-party account binds at most one user of an application: the primary key is the unique index.
  `CREATE TABLE auth_identities (app_id TEXT NOT NULL, platform TEXT NOT NULL, uid TEXT NOT NULL,
     user_id TEXT NOT NULL, CONSTRAINT auth_identities_pkey PRIMARY KEY (app_id, platform, uid))`,
  `CREATE INDEX auth_identities_user_idx ON auth_identities (app_id, user_id)`,
  `CREATE TABLE sms_numbers (app_id TEXT NOT NULL, phone TEXT NOT NULL, last_sent_at BIGINT NOT NULL,
     PRIMARY KEY (app_id, phone))`,
  `CREATE TABLE sms_sends (app_id TEXT NOT NULL, phone TEXT NOT NULL, sent_at BIGINT NOT NULL)`,
  `CREATE INDEX sms_sends_phone_idx ON sms_sends (app_id, phone, sent_at)`,
  `CREATE TABLE sms_codes (app_id TEXT NOT NULL, phone TEXT NOT NULL, purpose TEXT NOT NULL, digest TEXT NOT NULL,
     expires_at BIGINT NOT NULL, attempts INTEGER NOT NULL, PRIMARY KEY (app_id, phone, purpose))`,
  `CREATE INDEX sms_codes_digest_idx ON sms_codes (app_id, digest)`,
];

export const identityMigration = {
  name: '0006_identities_sms',
  statements: { sqlite: statements, postgres: statements },
};

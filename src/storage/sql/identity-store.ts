import { sql, type Kysely } from 'kysely';
import type { Acl, JsonObject, StoredObject, WriteOutcome } from '../../objects/types.ts';
import type { SessionSeal } from '../account-store.ts';
import { authDataIdentities, type BoundIdentity, type Identity, type IdentityStore } from '../identity-store.ts';
import type { SqlDialect } from './dialect.ts';

function readersOf(acl: Acl | null): string[] {
  if (acl === null) return ['*'];
  return Object.entries(acl)
    .filter(([, permission]) => permission.read === true)
    .map(([principal]) => principal);
}

function text(data: JsonObject, key: string): string | null {
  return typeof data[key] === 'string' ? (data[key] as string) : null;
}

/**
 * Makes the identity rows of a user match its authData. Runs inside the transaction that
 * writes the `_User` row, so a unique violation rolls the whole write back.
 */
export async function syncIdentities(trx: Kysely<any>, appId: string, userId: string, data: JsonObject): Promise<void> {
  await sql`DELETE FROM auth_identities WHERE app_id = ${appId} AND user_id = ${userId}`.execute(trx);
  for (const identity of authDataIdentities(data)) {
    await sql`INSERT INTO auth_identities (app_id, platform, uid, user_id)
      VALUES (${appId}, ${identity.platform}, ${identity.uid}, ${userId})`.execute(trx);
  }
}

export async function deleteIdentities(trx: Kysely<any>, appId: string, userId: string): Promise<void> {
  await sql`DELETE FROM auth_identities WHERE app_id = ${appId} AND user_id = ${userId}`.execute(trx);
}

/** Whether a `_User` write changed its authData, so its identity rows need syncing. */
export function authDataChanged(before: JsonObject | null, after: JsonObject): boolean {
  return JSON.stringify(before?.authData ?? null) !== JSON.stringify(after.authData ?? null);
}

export class SqlIdentityStore implements IdentityStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async findBound(appId: string, identities: Identity[]): Promise<BoundIdentity[]> {
    if (identities.length === 0) return [];
    const pairs = identities.map((identity) => sql`(platform = ${identity.platform} AND uid = ${identity.uid})`);
    const { rows } = await sql<{ platform: string; uid: string; user_id: string }>`SELECT platform, uid, user_id
      FROM auth_identities WHERE app_id = ${appId} AND (${sql.join(pairs, sql` OR `)})`.execute(this.db);
    return rows.map((row) => ({ platform: row.platform, uid: row.uid, userId: row.user_id }));
  }

  async insertUser(
    appId: string,
    user: StoredObject,
    secrets: { passwordHash: string | null; session: SessionSeal },
  ): Promise<WriteOutcome> {
    const d = this.dialect;
    try {
      await this.db.transaction().execute(async (trx) => {
        await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, acl, readers,
            username, email, mobile_phone, password_hash, session_digest, session_cipher)
          VALUES (${appId}, '_User', ${user.objectId}, ${user.createdAt}, ${user.updatedAt},
            ${d.encodeJson(user.data)}, ${d.encodeJson(user.acl)}, ${d.encodeReaders(readersOf(user.acl))},
            ${text(user.data, 'username')}, ${text(user.data, 'email')}, ${text(user.data, 'mobilePhoneNumber')},
            ${secrets.passwordHash}, ${secrets.session.digest}, ${secrets.session.cipher})`.execute(trx);
        await syncIdentities(trx, appId, user.objectId, user.data);
      });
      return { ok: true, object: user };
    } catch (error) {
      const field = d.uniqueViolation(error);
      if (field) return { ok: false, reason: 'taken', field };
      throw error;
    }
  }
}

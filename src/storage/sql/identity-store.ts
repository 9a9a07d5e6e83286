import { sql, type Kysely } from 'kysely';
import type { JsonObject, StoredObject, WriteOutcome } from '../../objects/types.ts';
import type { SessionSeal } from '../account-store.ts';
import { authDataIdentities, type BoundIdentity, type Identity, type IdentityStore } from '../identity-store.ts';
import type { SqlDialect } from './dialect.ts';
import { insertRows, takenOrThrow, toRow } from './object-row.ts';

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
    try {
      await this.db.transaction().execute(async (trx) => {
        await insertRows(this.dialect, [toRow(appId, user, secrets)]).execute(trx);
        await syncIdentities(trx, appId, user.objectId, user.data);
      });
      return { ok: true, object: user };
    } catch (error) {
      return takenOrThrow(this.dialect, error);
    }
  }
}

import { sql, type Kysely } from 'kysely';
import { processSecretBox, type SecretBox } from '../../lib/secret-box.ts';
import type { AuditEntry, LockoutPolicy, Operator, OperatorRecord, OperatorRole, OperatorSessionRow, OperatorStore } from '../operator-store.ts';

interface OperatorRow {
  id: string;
  name: string;
  role: string;
  created_at: number | string;
  password_hash?: string;
  failures?: number | string;
  locked_until?: number | string;
  totp_secret?: string | null;
  totp_pending?: string | null;
  totp_last_step?: number | string;
}

function toOperator(row: OperatorRow): Operator {
  return { id: row.id, name: row.name, role: row.role as OperatorRole, createdAt: Number(row.created_at), totp: Boolean(row.totp_secret) };
}

/** The columns toOperator reads. */
const operatorColumns = sql`o.id, o.name, o.role, o.created_at, o.totp_secret IS NOT NULL AND o.totp_secret <> '' AS totp_secret`;

/**
 * OperatorStore on SQL (tables operators, operator_sessions, operator_audit); one text for both databases.
 * TOTP secrets are sealed with the server's secret box, as the application keys are.
 */
export class SqlOperatorStore implements OperatorStore {
  private readonly db: Kysely<any>;
  private readonly secrets: SecretBox;
  constructor(options: { db: Kysely<any>; secrets?: SecretBox }) {
    this.db = options.db;
    this.secrets = options.secrets ?? processSecretBox();
  }

  private open(value: string | null | undefined): string | null {
    return value ? this.secrets.open(value) : null;
  }

  async create(op: OperatorRecord): Promise<'created' | 'taken'> {
    const { rows } = await sql<{ id: string }>`INSERT INTO operators (id, name, role, password_hash, created_at, failures, locked_until)
      VALUES (${op.id}, ${op.name}, ${op.role}, ${op.passwordHash}, ${op.createdAt}, 0, 0)
      ON CONFLICT (name) DO NOTHING RETURNING id`.execute(this.db);
    return rows.length > 0 ? 'created' : 'taken';
  }

  async byName(name: string): Promise<OperatorRecord | null> {
    const { rows } = await sql<Required<OperatorRow>>`SELECT id, name, role, created_at, password_hash, failures, locked_until,
        totp_secret, totp_pending, totp_last_step FROM operators WHERE name = ${name}`.execute(this.db);
    const row = rows[0];
    if (!row) return null;
    return {
      ...toOperator(row),
      passwordHash: row.password_hash,
      failures: Number(row.failures),
      lockedUntil: Number(row.locked_until),
      totpSecret: this.open(row.totp_secret),
      totpPending: this.open(row.totp_pending),
      totpLastStep: Number(row.totp_last_step),
    };
  }

  async list(): Promise<Operator[]> {
    const { rows } = await sql<OperatorRow>`SELECT ${operatorColumns} FROM operators o ORDER BY o.name`.execute(this.db);
    return rows.map(toOperator);
  }

  async count(): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM operators`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  async delete(name: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: string }>`DELETE FROM operators WHERE name = ${name} RETURNING id`.execute(trx);
      if (!rows[0]) return false;
      await sql`DELETE FROM operator_sessions WHERE operator_id = ${rows[0].id}`.execute(trx);
      await sql`DELETE FROM operator_recovery_codes WHERE operator_id = ${rows[0].id}`.execute(trx);
      return true;
    });
  }

  async setPassword(name: string, passwordHash: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: string }>`UPDATE operators SET password_hash = ${passwordHash}, failures = 0, locked_until = 0
        WHERE name = ${name} RETURNING id`.execute(trx);
      if (!rows[0]) return false;
      await sql`DELETE FROM operator_sessions WHERE operator_id = ${rows[0].id}`.execute(trx);
      return true;
    });
  }

  async setTotpPending(id: string, secret: string | null): Promise<boolean> {
    const sealed = secret === null ? null : this.secrets.seal(secret);
    const result = await sql`UPDATE operators SET totp_pending = ${sealed} WHERE id = ${id}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async confirmTotp(id: string, secret: string, step: number, recoveryDigests: readonly string[]): Promise<boolean> {
    // Compared opened, not as sealed text: sealing is randomised. One transaction, so a second enrolment in between loses.
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ totp_pending: string | null }>`SELECT totp_pending FROM operators WHERE id = ${id}`.execute(trx);
      if (this.open(rows[0]?.totp_pending) !== secret) return false;
      await sql`UPDATE operators SET totp_secret = totp_pending, totp_pending = NULL, totp_last_step = ${step} WHERE id = ${id}`.execute(trx);
      await this.putRecoveryCodes(trx, id, recoveryDigests);
      return true;
    });
  }

  private async putRecoveryCodes(trx: Kysely<any>, id: string, digests: readonly string[]): Promise<void> {
    await sql`DELETE FROM operator_recovery_codes WHERE operator_id = ${id}`.execute(trx);
    if (digests.length === 0) return;
    await sql`INSERT INTO operator_recovery_codes (operator_id, digest)
      VALUES ${sql.join(digests.map((digest) => sql`(${id}, ${digest})`))}`.execute(trx);
  }

  async replaceRecoveryCodes(id: string, digests: readonly string[]): Promise<boolean> {
    // Codes left by a TOTP reset racing this are never read: sign-in asks for them only with TOTP on, and enrolling replaces them.
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql`SELECT 1 AS one FROM operators WHERE id = ${id} AND totp_secret IS NOT NULL`.execute(trx);
      if (!rows[0]) return false;
      await this.putRecoveryCodes(trx, id, digests);
      return true;
    });
  }

  async useRecoveryCode(id: string, digest: string): Promise<boolean> {
    // One statement: of two sign-ins with the same code at once, one deletes it.
    const result = await sql`DELETE FROM operator_recovery_codes WHERE operator_id = ${id} AND digest = ${digest}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async recoveryCodesLeft(id: string): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM operator_recovery_codes WHERE operator_id = ${id}`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  async resetTotp(name: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: string }>`UPDATE operators SET totp_secret = NULL, totp_pending = NULL, totp_last_step = 0
        WHERE name = ${name} RETURNING id`.execute(trx);
      if (!rows[0]) return false;
      await sql`DELETE FROM operator_sessions WHERE operator_id = ${rows[0].id}`.execute(trx);
      await sql`DELETE FROM operator_recovery_codes WHERE operator_id = ${rows[0].id}`.execute(trx);
      return true;
    });
  }

  async useTotpStep(id: string, step: number): Promise<boolean> {
    // One statement: of two sign-ins with the same code at once, one wins.
    const result = await sql`UPDATE operators SET totp_last_step = ${step} WHERE id = ${id} AND totp_last_step < ${step}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async setRole(name: string, role: OperatorRole): Promise<boolean> {
    const result = await sql`UPDATE operators SET role = ${role} WHERE name = ${name}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async recordFailure(id: string, now: number, policy: LockoutPolicy): Promise<number> {
    // One statement: two nodes counting failures together never lose one.
    const { rows } = await sql<{ locked_until: number | string }>`UPDATE operators SET failures = failures + 1,
        locked_until = CASE WHEN failures + 1 >= ${policy.maxFailures} THEN ${now + policy.lockMs} ELSE locked_until END
      WHERE id = ${id} RETURNING locked_until`.execute(this.db);
    const until = Number(rows[0]?.locked_until ?? 0);
    return until > now ? until : 0;
  }

  async clearFailures(id: string): Promise<void> {
    await sql`UPDATE operators SET failures = 0, locked_until = 0 WHERE id = ${id}`.execute(this.db);
  }

  async insertSession(session: OperatorSessionRow): Promise<void> {
    await sql`DELETE FROM operator_sessions WHERE operator_id = ${session.operatorId} AND expires_at <= ${session.createdAt}`.execute(this.db);
    await sql`INSERT INTO operator_sessions (digest, operator_id, created_at, expires_at)
      VALUES (${session.digest}, ${session.operatorId}, ${session.createdAt}, ${session.expiresAt})`.execute(this.db);
  }

  async bySession(digest: string, now: number): Promise<Operator | null> {
    const { rows } = await sql<OperatorRow>`SELECT ${operatorColumns} FROM operator_sessions s
      JOIN operators o ON o.id = s.operator_id WHERE s.digest = ${digest} AND s.expires_at > ${now}`.execute(this.db);
    return rows[0] ? toOperator(rows[0]) : null;
  }

  async deleteSession(digest: string): Promise<void> {
    await sql`DELETE FROM operator_sessions WHERE digest = ${digest}`.execute(this.db);
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    await sql`INSERT INTO operator_audit (id, at, actor, action, target, detail)
      VALUES (${entry.id}, ${entry.at}, ${entry.actor}, ${entry.action}, ${entry.target}, ${JSON.stringify(entry.detail)})`.execute(this.db);
  }

  async listAudit(limit: number): Promise<AuditEntry[]> {
    const { rows } = await sql<{ id: string; at: number | string; actor: string; action: string; target: string; detail: string }>`
      SELECT id, at, actor, action, target, detail FROM operator_audit ORDER BY at DESC, id DESC LIMIT ${limit}`.execute(this.db);
    return rows.map((row) => ({ ...row, at: Number(row.at), detail: JSON.parse(row.detail) as Record<string, unknown> }));
  }
}

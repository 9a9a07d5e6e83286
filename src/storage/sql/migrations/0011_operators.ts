import type { Migration } from './migrate.ts';

/**
 * The console's own accounts (src/console/operators.ts), apart from any application's users: an
 * operator's password hash, role and failed sign-ins (the lockout); the console sessions, kept only as
 * the keyed digest of their token; and the audit log of every change an operator makes.
 */
function tables(integer: string): string[] {
  return [
    `CREATE TABLE operators (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, role TEXT NOT NULL,
       password_hash TEXT NOT NULL, created_at ${integer} NOT NULL, failures INTEGER NOT NULL DEFAULT 0,
       locked_until ${integer} NOT NULL DEFAULT 0)`,
    `CREATE TABLE operator_sessions (digest TEXT PRIMARY KEY, operator_id TEXT NOT NULL,
       created_at ${integer} NOT NULL, expires_at ${integer} NOT NULL)`,
    'CREATE INDEX operator_sessions_operator_idx ON operator_sessions (operator_id)',
    `CREATE TABLE operator_audit (id TEXT PRIMARY KEY, at ${integer} NOT NULL, actor TEXT NOT NULL,
       action TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL)`,
    'CREATE INDEX operator_audit_at_idx ON operator_audit (at, id)',
  ];
}

export const operators: Migration = { sqlite: tables('INTEGER'), postgres: tables('BIGINT') };

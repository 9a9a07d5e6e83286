import type { Migration } from './migrate.ts';

/**
 * Operators' TOTP recovery codes (src/console/operators.ts): only the keyed digest of each, deleted when
 * used, so a code signs in once; they go with the operator's TOTP.
 */
const statements = [
  `CREATE TABLE operator_recovery_codes (operator_id TEXT NOT NULL, digest TEXT NOT NULL,
     PRIMARY KEY (operator_id, digest))`,
];

export const operatorRecoveryCodes: Migration = { sqlite: statements, postgres: statements };

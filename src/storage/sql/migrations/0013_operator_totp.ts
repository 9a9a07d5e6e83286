import type { Migration } from './migrate.ts';

/**
 * Operators' optional TOTP (src/console/operators.ts): the secret being enrolled until a code confirms
 * it, the confirmed secret (sealed, as every secret Roost reads back), and the time step of the last
 * code accepted, so a code seen over a shoulder cannot be used twice.
 */
function columns(integer: string): string[] {
  return [
    'ALTER TABLE operators ADD COLUMN totp_pending TEXT',
    'ALTER TABLE operators ADD COLUMN totp_secret TEXT',
    `ALTER TABLE operators ADD COLUMN totp_last_step ${integer} NOT NULL DEFAULT 0`,
  ];
}

export const operatorTotp: Migration = { sqlite: columns('INTEGER'), postgres: columns('BIGINT') };

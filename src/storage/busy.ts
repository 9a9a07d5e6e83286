/**
 * Driver errors that mean "the database could not do it now", not "the request was wrong":
 * the statement failed as a whole (its transaction rolled back), so the client may simply retry.
 *
 * busy: SQLite's SQLITE_BUSY (and its extended codes) once busy_timeout ran out, SQLITE_LOCKED;
 * PostgreSQL (SQLSTATE) serialization failure, deadlock, lock timeout, too many connections.
 * unreachable: a PostgreSQL connection refused or lost (class 08; the driver's own socket errors
 * get those codes in src/storage/postgres/lost-connections.ts), the server shutting down or
 * starting up (57P01–57P03); SQLite's disk failing or full.
 */
export type StoreFault = 'busy' | 'unreachable';

const postgresBusy = new Set(['40001', '40P01', '55P03', '53300']);
const postgresUnreachable = new Set(['57P01', '57P02', '57P03']);

export function storeFault(error: unknown): StoreFault | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || postgresBusy.has(code)) return 'busy';
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_FULL' || postgresUnreachable.has(code) || /^08[0-9A-Z]{3}$/.test(code)) {
    return 'unreachable';
  }
  return null;
}

/** PostgreSQL cancelled the statement (57014): it outlived STATEMENT_TIMEOUT_MS, or an operator cancelled it. */
export function isStatementTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '57014';
}

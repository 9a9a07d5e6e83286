/**
 * Driver errors that mean "the database could not do it now", not "the request was wrong":
 * the statement failed as a whole (its transaction rolled back), so the client may simply retry.
 *
 * SQLite: SQLITE_BUSY (and its extended codes) once busy_timeout ran out; SQLITE_LOCKED.
 * PostgreSQL (SQLSTATE): serialization failure, deadlock, lock timeout, too many connections,
 * shutdown or start-up in progress, a lost connection (class 08).
 */
const postgresStates = new Set(['40001', '40P01', '55P03', '53300', '57P01', '57P02', '57P03']);

export function isStoreBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return true;
  return postgresStates.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

/** PostgreSQL cancelled the statement (57014): it outlived STATEMENT_TIMEOUT_MS, or an operator cancelled it. */
export function isStatementTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '57014';
}

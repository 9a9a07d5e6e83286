import pg from 'pg';

/**
 * Makes a lost PostgreSQL connection an ordinary, retryable store error instead of a crash or a 500.
 *
 * - pg emits 'error' on a client whose socket dies, also while it is checked out (pg-pool listens
 *   only while a client is idle, and kysely keeps clients checked out for a transaction); an
 *   'error' event nobody listens to exits the process. The query in flight fails on its own, and
 *   the pool drops the client when it is released (it is no longer queryable).
 * - The driver reports a lost or refused connection without a SQLSTATE ("Connection terminated
 *   unexpectedly", ECONNREFUSED, "not queryable", a connect timeout). Those failures get the
 *   SQLSTATE PostgreSQL itself uses for them, class 08, which src/storage/busy.ts maps to 503 with
 *   every other "try again" error. Errors with a SQLSTATE, or from a healthy client, pass unchanged.
 */
export function surviveLostConnections(pool: pg.Pool): { connect(): Promise<pg.PoolClient>; end(): Promise<void> } {
  const lost = new WeakSet<pg.PoolClient>();
  // An idle client dropped by the server (restart, fail-over): the pool removes it and emits this.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    const poolClient = client as pg.PoolClient;
    poolClient.on('error', () => lost.add(poolClient));
    const query = poolClient.query.bind(poolClient) as (...args: unknown[]) => unknown;
    // Only promise results: a cursor or a COPY stream reports its errors itself.
    (poolClient as { query: unknown }).query = (...args: unknown[]) => {
      const result = query(...args);
      if (!(result instanceof Promise)) return result;
      return result.catch((error: unknown) => {
        throw lost.has(poolClient) || isSocketError(error) ? asConnectionError(error, '08006') : error;
      });
    };
  });
  return {
    async connect() {
      try {
        return await pool.connect();
      } catch (error) {
        // Nothing else fails a checkout: the server refused, timed out or went away meanwhile.
        throw asConnectionError(error, '08001');
      }
    },
    end: () => pool.end(),
  };
}

function isSocketError(error: unknown): boolean {
  return typeof (error as { syscall?: unknown } | null)?.syscall === 'string';
}

/** 08001: the connection could not be made; 08006: it failed while in use. */
function asConnectionError(error: unknown, sqlState: '08001' | '08006'): unknown {
  if (error instanceof pg.DatabaseError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`database connection failed: ${message}`, { cause: error }), { code: sqlState });
}

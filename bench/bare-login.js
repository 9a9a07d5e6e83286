// The floor of bench/accounts.ts' login: a bare server doing only a password login's unavoidable work, so
// Roost's login reads against what this machine allows a login, not only against the hash alone. On Roost's
// own database and users: the user read with its attempt counted (one statement, as Roost's PostgreSQL
// store makes it), the argon2id check (the same @node-rs/argon2 binding, one per core as Roost's
// PasswordHasher runs them), the attempts cleared when right (a second statement), and a small JSON answer.
// No logger, no plugins, no application keys, no session token, no lockout wait.
//   ROOST_DIR=… DATABASE_URL=… APP_ID=… PORT=… node bench/bare-login.js
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';
import { verify } from '@node-rs/argon2';

const dir = process.env.ROOST_DIR ?? process.cwd();
const { hashParallelism } = await import(pathToFileURL(join(dir, 'dist', 'accounts', 'passwords.js')).href);
const { Turns } = await import(pathToFileURL(join(dir, 'dist', 'lib', 'turns.js')).href);
const appId = process.env.APP_ID;
const windowMs = 15 * 60 * 1000;

// As Roost's pool: ten connections, no JIT, bigint as a number.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, options: '-c jit=off' });
pg.types.setTypeParser(20, Number);
const hashes = new Turns(hashParallelism());

// Both commit without waiting for the WAL's flush, as Roost's do (docs/operations.md, PostgreSQL).
const asyncCommit = `set_config('synchronous_commit', 'off', true) = 'off'`;
const ring = ['at1', 'at2', 'at3', 'at4', 'at5', 'at6', 'at7'];
// The text of Roost's `roost_login_attempt_username` and `roost_login_clear` (src/storage/postgres/account-store.ts), written out.
const countingRead = `WITH u AS (SELECT o.class_name, o.id, o.created_at, o.updated_at, o.data, o.acl, o.password_hash, o.session_cipher
    FROM objects o WHERE app_id = $1 AND class_name = '_User' AND username = $2),
  a AS (INSERT INTO login_attempts (app_id, user_id, at7) SELECT $1, u.id, $3 FROM u WHERE ${asyncCommit}
    ON CONFLICT (app_id, user_id) DO UPDATE SET ${ring.slice(0, -1).map((c, i) => `${c} = login_attempts.${ring[i + 1]}`).join(', ')}, at7 = excluded.at7
    WHERE NOT (login_attempts.at1 IS NOT NULL AND login_attempts.at1 > login_attempts.at7 - $4 AND login_attempts.at7 > $5)
    RETURNING ${ring.join(', ')})
  SELECT u.*, a.* FROM u LEFT JOIN a ON true`;
const clear = `DELETE FROM login_attempts WHERE app_id = $1 AND user_id = $2 AND ${asyncCommit}`;

const app = Fastify({ logger: false });
app.get('/health', async () => ({ ok: true }));
app.post('/login', async (request, reply) => {
  const { username, password } = request.body;
  const now = Date.now();
  const { rows } = await pool.query({ name: 'bare_login_attempt', text: countingRead, values: [appId, username, now, windowMs, now - windowMs] });
  const row = rows[0];
  if (!row) return reply.code(400).send({ code: 211, error: 'Could not find user.' });
  if (row.at7 === null) return reply.code(400).send({ code: 219, error: 'Locked.' });
  if (!row.password_hash || !(await hashes.run(() => verify(row.password_hash, password)))) {
    return reply.code(400).send({ code: 210, error: 'The username and password mismatch.' });
  }
  await pool.query({ name: 'bare_login_clear', text: clear, values: [appId, row.id] });
  return { objectId: row.id, username };
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 3998) });
process.on('SIGTERM', () => app.close().then(() => pool.end()).then(() => process.exit(0)));

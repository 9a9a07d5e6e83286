// The peer of bench/accounts.ts: Parse Server on PostgreSQL, one process, settings kept close
// to its defaults (no cache server, no rate limit, logs at error level, no log files).
//   DATABASE_URI=postgres://… PORT=… PARSE_APP_ID=… PARSE_MASTER_KEY=… PARSE_REST_KEY=… node server.js
import { ParseServer } from 'parse-server';

const port = Number(process.env.PORT ?? 1337);
const need = (name) => {
  const value = process.env[name];
  if (!value) {
    console.error(`peer: ${name} is required`);
    process.exit(2);
  }
  return value;
};

// Parse Server handles SIGTERM itself (closes the server and exits).
await ParseServer.startApp({
  databaseURI: need('DATABASE_URI'),
  appId: need('PARSE_APP_ID'),
  masterKey: need('PARSE_MASTER_KEY'),
  maintenanceKey: need('PARSE_MASTER_KEY') + '-maintenance',
  restAPIKey: need('PARSE_REST_KEY'),
  serverURL: `http://127.0.0.1:${port}/parse`,
  host: '127.0.0.1',
  port,
  mountPath: '/parse',
  logLevel: 'error',
  logsFolder: null,
  silent: true,
  masterKeyIps: ['127.0.0.1', '::1', '::ffff:127.0.0.1'],
  allowClientClassCreation: false,
});


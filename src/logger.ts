import pino, { type Logger } from 'pino';

/** Paths pino blanks out wherever they appear, so no key, token or password reaches a log line. */
export const redactedPaths = [
  'req.headers["x-lc-key"]',
  'req.headers["x-lc-sign"]',
  'req.headers["x-lc-session"]',
  'req.headers["x-svc-key"]',
  'req.headers["x-svc-sign"]',
  'req.headers["x-svc-session"]',
  'req.headers.authorization',
  'password',
  '*.password',
  'sessionToken',
  '*.sessionToken',
  'masterKey',
  '*.masterKey',
  'appKey',
  '*.appKey',
];

export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    { level: options.level, redact: { paths: redactedPaths, censor: '[redacted]' }, base: { service: 'roost' } },
    options.destination,
  );
}

import { ApiError, fail } from '../lib/errors.ts';
import { newObjectId } from '../lib/ids.ts';
import { decodeWhere, parseWhere } from '../objects/query.ts';
import { checkJson, checkTextDeep, isObject, parseIsoDate } from '../objects/values.ts';
import type { Json, JsonObject, Readers, Where } from '../objects/types.ts';
import type { NewPush } from './types.ts';

/** SPEC §8 and reference §4.2: limits of one push request. */
export const limits = {
  /** The message content (data, with the hms object) as JSON, in bytes. */
  contentBytes: 4096,
  packageNameBytes: 128,
  /** A req_id repeated within this window is not sent again. */
  dedupeMs: 5 * 60 * 1000,
  /** A push_time closer than this is sent at once. */
  scheduleThresholdMs: 60 * 1000,
  maxScheduleMs: 30 * 24 * 3600 * 1000,
  /** An expiration_interval beyond this (about 100 years) is a mistake, not a wish. */
  maxExpirationSeconds: 100 * 365 * 24 * 3600,
  /** Reference §4.1: pushes only reach installations updated (the app opened) within the last 90 days. */
  idleInstallationMs: 90 * 24 * 3600 * 1000,
};

/** Keys that name an Android package anywhere in the request (maker parameters); each at most 128 bytes. */
const packageKeys = new Set(['package', 'packageName', 'package_name', 'restricted_package_name', 'appPkgName']);
const channelPattern = /^[\p{Script=Han}A-Za-z0-9_\-=]*$/u;
const shortId = /^[A-Za-z0-9]{1,16}$/;

export function checkChannels(value: unknown, field = 'channels'): string[] {
  if (!Array.isArray(value)) fail('invalidChannel', `${field} must be an array of channel names.`);
  for (const channel of value) {
    if (typeof channel !== 'string' || !channelPattern.test(channel) || channel.length > 256) {
      fail('invalidChannel', `Invalid channel name ${JSON.stringify(channel)}: use letters, digits, _, - and =.`);
    }
  }
  return value as string[];
}

function checkPackageNames(value: unknown, path: string): void {
  if (Array.isArray(value)) value.forEach((item, i) => checkPackageNames(item, `${path}[${i}]`));
  if (!isObject(value)) return;
  for (const [key, item] of Object.entries(value)) {
    if (packageKeys.has(key) && typeof item === 'string' && Buffer.byteLength(item, 'utf8') > limits.packageNameBytes) {
      fail('incorrectType', `${path}.${key}: a package name is at most ${limits.packageNameBytes} bytes.`);
    }
    checkPackageNames(item, `${path}.${key}`);
  }
}

function time(value: unknown, field: string): number {
  const raw = isObject(value) && value.__type === 'Date' ? value.iso : value;
  const ms = parseIsoDate(raw);
  if (ms === null) fail('incorrectType', `${field} must be an ISO 8601 UTC time, e.g. "2030-01-01T00:00:00.000Z".`);
  return ms;
}

/**
 * The push's `where`: an `_Installation` query, parsed by the one where parser of object queries, so
 * every operator and every refusal is theirs. The record keeps it as sent (its `$` keys included).
 */
function parseWhereField(raw: unknown): { tree: Where; json: Json } {
  const value = decodeWhere(raw);
  const tree = parseWhere(value);
  // What the parser did not read (a Pointer's className, say) is still stored with the record.
  checkTextDeep(value);
  return { tree, json: (value ?? {}) as Json };
}

export interface PushRequestContext {
  appId: string;
  now: number;
  /** The X-LC-Prod header: "1" production, anything else development; absent means production. */
  prodHeader: string | null;
  /** The caller's readers (readersFor): a client push's where reaches other classes only as a find would. */
  readers: Readers;
}

/**
 * Validates a POST /1.1/push body (reference §4.2) into a push to store. Bad input is a 4xx
 * ApiError naming the field.
 */
/**
 * The body's shape as POST /1.1/push declares it (src/http/routes/push.ts); allOf keeps the order in
 * which its faults are answered. What a schema cannot say (sizes, where, times) is checked below.
 */
export const pushBodySchema = {
  type: 'object',
  'x-error': 'invalidJson',
  allOf: [
    { not: { required: ['cql'] }, 'x-error': { kind: 'invalidQuery', message: 'cql is not supported for push: select installations with where.' } },
    {
      required: ['data'],
      properties: { data: { type: 'object', 'x-missing': { kind: 'missingRequired', message: 'A push needs "data".' }, 'x-error': { kind: 'incorrectType', message: 'data must be a JSON object.' } } },
    },
    {
      properties: {
        data: {
          properties: {
            alert: { type: ['string', 'object'], 'x-error': { kind: 'incorrectType', message: 'data.alert must be a string (or an APNs alert object).' } },
            title: { type: 'string', 'x-error': { kind: 'incorrectType', message: 'data.title must be a string.' } },
            silent: { type: 'boolean', 'x-error': { kind: 'incorrectType', message: 'data.silent must be true or false.' } },
          },
        },
      },
    },
  ],
};

/** `body` has passed pushBodySchema. */
export function parsePushRequest(body: Record<string, unknown>, context: PushRequestContext): NewPush {
  const { now } = context;
  const data = checkJson(body.data) as JsonObject;
  const hms = body.hms === undefined ? undefined : checkJson(body.hms);
  if (hms !== undefined && !isObject(hms)) fail('incorrectType', 'hms must be a JSON object.');
  const contentBytes = Buffer.byteLength(JSON.stringify(hms === undefined ? data : { data, hms }), 'utf8');
  if (contentBytes > limits.contentBytes) {
    throw new ApiError(
      'payloadTooLarge',
      `The push message content is ${contentBytes} bytes; the limit is ${limits.contentBytes} bytes.`,
    );
  }
  checkPackageNames(body, 'request');

  const where = parseWhereField(body.where);
  const channels = body.channels === undefined ? null : checkChannels(body.channels);
  const selection: Where[] = [where.tree];
  // As the hosted service adds them (and GET /1.1/scheduledPushMessages shows them): channels $in.
  if (channels !== null) selection.push(parseWhere({ channels: { $in: channels } }));
  // Installations a maker reported invalid are never targeted again.
  selection.push({ op: 'not', item: { op: 'eq', path: ['valid'], value: false } });

  let pushTime = now;
  if (body.push_time !== undefined) {
    const at = time(body.push_time, 'push_time');
    if (at - now > limits.maxScheduleMs) fail('incorrectType', 'push_time may be at most 30 days ahead.');
    if (at - now >= limits.scheduleThresholdMs) pushTime = at;
  }
  if (body.expiration_time !== undefined && body.expiration_interval !== undefined) {
    fail('incorrectType', 'Give expiration_time or expiration_interval, not both.');
  }
  let expiresAt: number | null = null;
  if (body.expiration_time !== undefined) expiresAt = time(body.expiration_time, 'expiration_time');
  if (body.expiration_interval !== undefined) {
    const seconds = typeof body.expiration_interval === 'string' ? Number(body.expiration_interval) : body.expiration_interval;
    // Regression: 1e308 seconds made an infinite time, which PostgreSQL's BIGINT refused with a 500.
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > limits.maxExpirationSeconds) {
      fail('incorrectType', `expiration_interval must be a positive number of seconds, at most ${limits.maxExpirationSeconds}.`);
    }
    expiresAt = pushTime + Math.round(seconds * 1000);
  }
  if (expiresAt !== null && expiresAt <= Math.max(now, pushTime)) {
    fail('incorrectType', 'The push would expire before it is sent: check expiration_time / expiration_interval.');
  }

  for (const field of ['notification_id', 'req_id'] as const) {
    const value = body[field];
    if (value !== undefined && (typeof value !== 'string' || !shortId.test(value))) {
      fail('incorrectType', `${field} must be 1 to 16 letters or digits.`);
    }
  }
  let prod = context.prodHeader === null || context.prodHeader === '1' ? 'prod' : 'dev';
  if (body.prod !== undefined) {
    if (body.prod !== 'prod' && body.prod !== 'dev') fail('incorrectType', 'prod must be "prod" or "dev".');
    prod = body.prod;
  }
  if (body.flow_control !== undefined && !Number.isInteger(body.flow_control)) {
    fail('incorrectType', 'flow_control must be a whole number of devices per second.');
  }

  // Idle installations are skipped, counted from when sending starts (a scheduled push's push_time).
  selection.push({ op: 'gt', path: ['updatedAt'], value: pushTime - limits.idleInstallationMs });

  const request: JsonObject = { where: where.json, prod };
  if (channels !== null) request.channels = channels;
  if (typeof body.notification_id === 'string') request.notificationId = body.notification_id;
  if (typeof body.req_id === 'string') request.reqId = body.req_id;
  // Below the floor counts as the floor, as hosted (the Python SDK: "flow_control = 0 <=> flow_control = 1000").
  if (body.flow_control !== undefined) request.flowControl = Math.max(body.flow_control as number, 1000);
  return {
    appId: context.appId,
    objectId: newObjectId(now),
    createdAt: now,
    pushTime,
    expiresAt,
    status: pushTime > now ? 'scheduled' : 'in-queue',
    selector: { op: 'and', items: selection },
    readers: context.readers,
    content: { data, ...(hms !== undefined && { hms }), ...(channels !== null && channels.length > 0 && { channel: channels[0] }) },
    request,
    reqId: typeof body.req_id === 'string' ? body.req_id : null,
    dedupeMs: limits.dedupeMs,
  };
}

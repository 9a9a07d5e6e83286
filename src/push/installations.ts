import { ApiError, fail } from '../lib/errors.ts';
import type { QueryCaller } from '../objects/query-reach.ts';
import { table } from '../lib/lookup.ts';
import type { Caller } from '../objects/acl.ts';
import type { Operation } from '../objects/ops.ts';
import type { ObjectService, WriteBody } from '../objects/service.ts';
import type { AppRecord, Json, JsonObject, StoredObject, Where } from '../objects/types.ts';
import { isObject, userPointer } from '../objects/values.ts';
import type { Store } from '../storage/store.ts';
import { checkChannels } from './request.ts';
import { defaultProfile } from './routing.ts';
import { vendorNames } from './types.ts';

export const installationClass = '_Installation';
const profilePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const installationIdPattern = /^[\x21-\x7e]{1,256}$/;

/** Whether `value` could be an installationId: the devices' channels log in with nothing else. */
export function isInstallationId(value: unknown): value is string {
  return typeof value === 'string' && installationIdPattern.test(value);
}

type FieldRule = (value: Json) => void;

/** Fields of the reference §4.1 whose values Roost relies on; anything else is free. */
const rules = table<FieldRule>({
  installationId(value) {
    if (!isInstallationId(value)) {
      fail('incorrectType', 'installationId must be a string of 1 to 256 visible ASCII characters.');
    }
  },
  vendor(value) {
    if (typeof value !== 'string' || !(vendorNames as readonly string[]).includes(value)) {
      fail('incorrectType', `vendor must be one of ${vendorNames.join(', ')}.`);
    }
  },
  registrationId(value) {
    if (typeof value !== 'string' || value === '' || value.length > 4096) {
      fail('incorrectType', 'registrationId must be a non-empty string.');
    }
  },
  deviceProfile(value) {
    if (typeof value !== 'string' || !profilePattern.test(value)) {
      fail('incorrectType', 'deviceProfile must start with a letter or _ and hold only letters, digits and _.');
    }
  },
  channels(value) {
    checkChannels(value);
  },
  valid(value) {
    if (typeof value !== 'boolean') fail('incorrectType', 'valid must be true or false.');
  },
  deviceType(value) {
    if (typeof value !== 'string') fail('incorrectType', 'deviceType must be a string such as "android" or "ios".');
  },
});

/** Refuses operations that would leave a checked field with a value Roost cannot use. */
export function checkInstallationOperations(operations: Operation[]): void {
  for (const op of operations) {
    const [field, ...rest] = op.path;
    const rule = rules[field];
    if (!rule) continue;
    if (rest.length > 0) fail('incorrectType', `${field} cannot be changed by a nested key.`);
    if (op.kind === 'set') rule(op.value);
    else if (op.kind === 'delete') continue;
    else if (field === 'channels' && (op.kind === 'add' || op.kind === 'addUnique' || op.kind === 'remove')) {
      checkChannels(op.objects);
    } else fail('incorrectType', `${field} does not support that operation.`);
  }
}

/**
 * The user an installation is bound to: null while unbound; '' when `user` holds something other than a
 * user pointer (written by the master key or an import), which no session matches.
 */
function boundUser(data: JsonObject): string | null {
  const user = data.user;
  if (user === undefined || user === null) return null;
  const pointer = isObject(user) && user.__type === 'Pointer' && user.className === '_User';
  return pointer && typeof user.objectId === 'string' ? user.objectId : '';
}

/**
 * An installation bound to a user belongs to that user: only its session or the master key may read it by
 * id or change it. A push aimed at the user reaches the installation's installationId, so letting anyone
 * else re-point it (or bind their own device to the user) would hand them that user's pushes.
 */
export function mayTouchInstallation(caller: Caller, current: StoredObject): boolean {
  const owner = boundUser(current.data);
  return caller.master || owner === null || owner === caller.userId;
}

/** `user` may be set only to the caller's own user (its session's), or removed; anything else needs the master key. */
function checkUserOperations(caller: Caller, operations: Operation[]): void {
  if (caller.master) return;
  for (const op of operations) {
    if (op.path[0] !== 'user') continue;
    const own =
      op.path.length === 1 &&
      (op.kind === 'delete' ||
        (op.kind === 'set' && (op.value === null || (caller.userId !== null && boundUser({ user: op.value }) === caller.userId))));
    if (!own) fail('installationOwned', "An installation's user can only be set to the user of the session, or with the master key.");
  }
}

const ownerGuard = (caller: Caller) => (current: StoredObject) =>
  mayTouchInstallation(caller, current) ? null : new ApiError('installationOwned');

function setsField(body: WriteBody, field: string): boolean {
  return body.operations.some((op) => op.path[0] === field);
}

/** Adds deviceProfile "_default" when the record would have none, and the session's user. */
function withDefaults(caller: Caller, body: WriteBody, current: StoredObject | null, fillProfile: boolean): WriteBody {
  const operations = [...body.operations];
  if (fillProfile && !setsField(body, 'deviceProfile') && current?.data.deviceProfile === undefined) {
    operations.push({ kind: 'set', path: ['deviceProfile'], value: defaultProfile });
  }
  // A device saved with a session is tied to that user (reference §4.1).
  if (caller.userId !== null && !setsField(body, 'user')) {
    operations.push({ kind: 'set', path: ['user'], value: userPointer(caller.userId) });
  }
  return { acl: body.acl, operations };
}

function installationIdOf(body: WriteBody): string | null {
  const op = body.operations.find((o) => o.kind === 'set' && o.path.length === 1 && o.path[0] === 'installationId');
  return op && op.kind === 'set' && typeof op.value === 'string' ? op.value : null;
}

/** `_Installation` records: the object rules plus field checks, defaults and upsert by installationId. */
export class InstallationService {
  private readonly objects: ObjectService;
  private readonly store: Store;

  constructor(options: { objects: ObjectService; store: Store }) {
    this.objects = options.objects;
    this.store = options.store;
  }

  private async findByInstallationId(appId: string, installationId: string): Promise<StoredObject | null> {
    const where: Where = { op: 'eq', path: ['installationId'], value: installationId };
    const found = await this.store.findObjects(appId, installationClass, { where, order: [], limit: 1, skip: 0, readers: null });
    return found[0] ?? null;
  }

  /** Whether the application has an installation with this installationId (a push-connection login). */
  async exists(appId: string, installationId: string): Promise<boolean> {
    return (await this.findByInstallationId(appId, installationId)) !== null;
  }

  /** Creates the installation, or updates the one that already has this installationId. */
  async save(caller: Caller & { app: AppRecord }, body: WriteBody): Promise<{ created: boolean; object: StoredObject }> {
    checkInstallationOperations(body.operations);
    checkUserOperations(caller, body.operations);
    const installationId = installationIdOf(body);
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = installationId === null ? null : await this.findByInstallationId(caller.appId, installationId);
      if (existing) {
        const changes = withDefaults(caller, body, existing, true);
        const object = await this.objects.update(caller, installationClass, existing.objectId, changes, undefined, ownerGuard(caller));
        return { created: false, object };
      }
      try {
        return { created: true, object: await this.objects.create(caller, installationClass, withDefaults(caller, body, null, true)) };
      } catch (error) {
        // Another request created the same installationId between our look-up and insert: update it instead.
        if (!(error instanceof ApiError && error.kind === 'duplicateValue' && installationId !== null)) throw error;
      }
    }
    return fail('duplicateValue');
  }

  async update(caller: QueryCaller, objectId: string, body: WriteBody, condition?: Where): Promise<StoredObject> {
    checkInstallationOperations(body.operations);
    checkUserOperations(caller, body.operations);
    const changes = withDefaults(caller, body, null, false);
    return this.objects.update(caller, installationClass, objectId, changes, condition, ownerGuard(caller));
  }

  /** The installation as the caller may read it by id: one bound to another user reads as missing. */
  async get(caller: Caller, objectId: string): Promise<StoredObject | null | 'noClass'> {
    const found = await this.objects.get(caller, installationClass, objectId);
    return found !== null && found !== 'noClass' && !mayTouchInstallation(caller, found) ? null : found;
  }
}

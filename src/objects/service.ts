import { ApiError, fail, type ErrorKind } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { newObjectId } from '../lib/ids.ts';
import { own } from '../lib/lookup.ts';
import type { Store } from '../storage/store.ts';
import { access, conditionFor, parseAcl, readersFor, writeAccess, type Caller } from './acl.ts';
import { hasInQuery, markArrayInQueries } from './array-pointers.ts';
import { classRulesOf } from './class-rules.ts';
import { defaultAclFor } from './default-acl.ts';
import { readIncluded, readIncludedJson, type IncludePlan, type Included, type IncludedJson } from './include.ts';
import { mayHoldFile } from './file-values.ts';
import { checkConditionReads, checkFind, queryReads, type QueryCaller } from './query-reach.ts';
import { applyOperations, parseOperations, relationChanges, type Operation } from './ops.ts';
import { RelationSchema, jsonWithDescriptors, resolveRelationFields, withDescriptors } from './relations.ts';
import type { Acl, AppRecord, FindQuery, FoundJson, JsonObject, OrderKey, StoredJson, StoredObject, UniqueField, Where, WriteOutcome } from './types.ts';
import type { ClassSchemas } from './schemas.ts';
import { checkClassName, isObject, serverFields } from './values.ts';
import { toWire } from './wire.ts';

export interface WriteBody {
  acl: Acl | undefined;
  operations: Operation[];
}

const takenErrors: Record<UniqueField, ErrorKind> = {
  objectId: 'duplicateValue',
  username: 'usernameTaken',
  email: 'emailTaken',
  mobilePhoneNumber: 'phoneTaken',
  installationId: 'duplicateValue',
  authData: 'linkedElsewhere',
  classIndex: 'duplicateValue',
  roleName: 'duplicateValue',
};

/**
 * Flags the SDKs put beside the fields of a write body: the JS SDK's hooks to skip, the Swift, C++ and
 * old Android SDKs' batch bookkeeping. Not fields; any other "__" key is (and is refused, 105).
 */
const sdkFlags = new Set(['__ignore_hooks', '__internalId', '__children']);

/** Splits a write body into its ACL and field operations; server-owned keys and SDK flags are ignored. */
export function parseWriteBody(body: unknown): WriteBody {
  if (!isObject(body)) fail('invalidJson');
  let acl: Acl | undefined;
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'ACL') {
      const parsed = parseAcl(value);
      if (parsed instanceof ApiError) throw parsed;
      acl = parsed;
    } else if (!serverFields.has(key) && !sdkFlags.has(key)) {
      fields[key] = value;
    }
  }
  return { acl, operations: parseOperations(fields) };
}

/** The top-level fields a write body touches (`ACL` when it sets one), for touchedFields (src/objects/wire.ts). */
export function touchedRoots(body: WriteBody): Set<string> {
  const roots = new Set(body.operations.map((op) => op.path[0]));
  if (body.acl !== undefined) roots.add('ACL');
  return roots;
}

/** Turns a store outcome into the object, or throws the error a client should see. */
export function settle(outcome: WriteOutcome<ApiError>, ref: { className: string; objectId: string }): StoredObject {
  if (outcome.ok) return outcome.object;
  switch (outcome.reason) {
    case 'taken':
      throw new ApiError(takenErrors[outcome.field]);
    case 'notFound':
      throw new ApiError('other', `Could not find object by id '${ref.objectId}' for class '${ref.className}'.`);
    case 'conditionFailed':
      throw new ApiError('conditionFailed');
    case 'refused':
      throw outcome.refusal;
    case 'relationClass':
      throw new ApiError('invalidRelation');
  }
}

/** A write refused until the caller's roles are read (ObjectService.underAcl); never answered. */
const rolesNeeded = new ApiError('aclWriteDenied');

/** Why the caller may not write the current row under its ACL, or null when it may. */
function aclRefusal(current: StoredObject, caller: Caller, roles: ReadonlySet<string> | undefined): ApiError | null {
  const access = writeAccess(current.acl, caller, roles);
  if (access === 'roles') return rolesNeeded;
  return access ? null : new ApiError('aclWriteDenied');
}

export interface FindOptions {
  where: Where;
  order: OrderKey[];
  limit: number;
  skip: number;
}

/**
 * A built-in class's rule on reading one of its objects by reference, beyond the ACL (an installation
 * bound to another user reads as missing): an include of such an object follows it.
 */
export type ReadRule = (caller: Caller, object: StoredObject) => boolean;

/** Objects of any class: create, read, update, delete and query, under ACLs; field types as the class schema has them. */
export class ObjectService {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly schemas: ClassSchemas;
  private readonly callerRoles = new WeakMap<Caller, Promise<ReadonlySet<string>>>();
  private readonly readRules: Readonly<Record<string, ReadRule>>;
  /** Which fields of a class are relations: their descriptors on every read, their meaning in a where. */
  readonly relations: RelationSchema;

  /** A `_File` record's url as answered: signed when files are private (src/files/url-signing.ts), else as kept. */
  readonly fileUrl: (url: string) => string;

  constructor(options: {
    store: Store;
    clock: Clock;
    schemas: ClassSchemas;
    readRules?: Record<string, ReadRule>;
    fileUrl?: (url: string) => string;
  }) {
    this.fileUrl = options.fileUrl ?? ((url) => url);
    this.store = options.store;
    this.clock = options.clock;
    this.schemas = options.schemas;
    this.readRules = options.readRules ?? {};
    this.relations = new RelationSchema({ schemas: options.schemas });
  }

  /** The object as read: its relation fields as descriptors (src/objects/relations.ts). */
  private async described(appId: string, object: StoredObject): Promise<StoredObject> {
    return withDescriptors(object, await this.relations.fieldsOf(appId, object.className));
  }

  /** Objects read (get, find, of any class) as they go out: each relation field as its descriptor. */
  async describe(appId: string, objects: readonly StoredObject[]): Promise<StoredObject[]> {
    return Promise.all(objects.map((object) => this.described(appId, object)));
  }

  /**
   * A where as the store reads it: relation fields compared with pointers become "the relation holds";
   * an $inQuery on a field the schema types Array matches the pointers among its elements.
   */
  private async resolved(appId: string, className: string, where: Where): Promise<Where> {
    const classes = [...new Set(queryReads(className, where).map((read) => read.className))];
    const [fields, types] = await Promise.all([
      Promise.all(classes.map((name) => this.relations.fieldsOf(appId, name))),
      hasInQuery(where) ? Promise.all(classes.map((name) => this.schemas.fieldTypes(appId, name))) : null,
    ]);
    let resolved = where;
    if (types) resolved = markArrayInQueries(resolved, className, (name) => types[classes.indexOf(name)]);
    if (fields.every((of) => Object.keys(of).length === 0)) return resolved;
    return resolveRelationFields(resolved, className, (name) => fields[classes.indexOf(name)]);
  }

  /**
   * Builds and inserts a new object; without an ACL it gets the class's default (src/objects/default-acl.ts).
   * `objectId` is for an id given out before the object exists (a file's, at POST /1.1/fileTokens): taken, it is 137.
   */
  async create(caller: Caller & { app: AppRecord }, className: string, body: WriteBody, given?: { objectId: string }): Promise<StoredObject> {
    checkClassName(className);
    classRulesOf(className)?.checkCreate?.(body);
    const applied = applyOperations({}, body.operations);
    if (applied instanceof ApiError) throw applied;
    await this.schemas.checkOperations(caller.appId, className, body.operations);
    const data = await this.schemas.withDefaults(caller.appId, className, applied);
    const acl = body.acl ?? defaultAclFor(caller.app.settings.classDefaultACL, className, caller.userId);
    const relations = relationChanges(body.operations);
    await this.relations.check(caller.appId, className, relations);
    const now = this.clock.now();
    for (let attempt = 0; ; attempt++) {
      const object: StoredObject = {
        className,
        objectId: given?.objectId ?? newObjectId(now),
        createdAt: now,
        updatedAt: now,
        acl,
        data,
      };
      const outcome = await this.store.insertObject(caller.appId, object, relations);
      // A random id colliding is astronomically rare; one retry covers it.
      if (!outcome.ok && outcome.reason === 'taken' && outcome.field === 'objectId' && attempt === 0 && !given) continue;
      const saved = settle(outcome, object);
      this.relations.learn(caller.appId, className, relations);
      return this.described(caller.appId, saved);
    }
  }

  /** The object if it exists and the caller may read it; 'noClass' when the class has no objects at all. */
  async get(caller: Caller, className: string, objectId: string): Promise<StoredObject | null | 'noClass'> {
    checkClassName(className);
    const ref = { appId: caller.appId, className, objectId };
    return (await this.store.getObject(ref, readersFor(caller))) ?? this.missing(caller, className);
  }

  /** get, with the fields as JSON text to send on (StoredJson). */
  async getJson(caller: Caller, className: string, objectId: string): Promise<StoredJson | null | 'noClass'> {
    checkClassName(className);
    const ref = { appId: caller.appId, className, objectId };
    const found = await this.store.getObjectJson(ref, readersFor(caller));
    return found ? jsonWithDescriptors(found, await this.relations.fieldsOf(caller.appId, className)) : this.missing(caller, className);
  }

  /** What a read that found nothing answers: null, or 'noClass' when the class has no objects at all. */
  private async missing(caller: Caller, className: string): Promise<null | 'noClass'> {
    return (await this.store.classExists(caller.appId, className)) ? null : 'noClass';
  }

  /** `guard` lets a built-in class add its own rule on the current row, checked with the ACL. */
  async update(
    caller: QueryCaller,
    className: string,
    objectId: string,
    body: WriteBody,
    condition?: Where,
    guard?: (current: StoredObject) => ApiError | null,
  ): Promise<StoredObject> {
    checkClassName(className);
    checkConditionReads(caller, className, condition);
    const classGuard = classRulesOf(className)?.updateGuard?.(body);
    await this.schemas.checkOperations(caller.appId, className, body.operations);
    const ref = { appId: caller.appId, className, objectId };
    const relations = relationChanges(body.operations);
    await this.relations.check(caller.appId, className, relations);
    const where = condition && (await this.resolved(caller.appId, className, condition));
    const outcome = await this.underAcl(caller, (roles) =>
      this.store.updateObject<ApiError>(
        ref,
        (current) => {
          const refusal = aclRefusal(current, caller, roles) ?? guard?.(current) ?? classGuard?.(current);
          if (refusal) return { refused: refusal };
          const data = applyOperations(current.data, body.operations);
          if (data instanceof ApiError) return { refused: data };
          return { ...current, data, acl: body.acl === undefined ? current.acl : body.acl, updatedAt: this.nextUpdatedAt(current) };
        },
        conditionFor(caller, where),
        relations,
      ),
    );
    const saved = settle(outcome, ref);
    this.relations.learn(caller.appId, className, relations);
    return this.described(caller.appId, saved);
  }

  /** Deletes when permitted; deleting what is already gone succeeds, as the service does. */
  async remove(caller: QueryCaller, className: string, objectId: string, condition?: Where): Promise<void> {
    checkClassName(className);
    checkConditionReads(caller, className, condition);
    const ref = { appId: caller.appId, className, objectId };
    const where = condition && (await this.resolved(caller.appId, className, condition));
    const outcome = await this.underAcl(caller, (roles) =>
      this.store.deleteObject(
        ref,
        (current) => {
          const refusal = aclRefusal(current, caller, roles);
          return refusal ? { refused: refusal } : null;
        },
        conditionFor(caller, where),
      ),
    );
    if (!outcome.ok && outcome.reason === 'notFound') return;
    settle(outcome, ref);
  }

  async find(caller: QueryCaller, className: string, options: FindOptions): Promise<StoredObject[]> {
    const query = await this.findQuery(caller, className, options);
    return query === null ? [] : this.store.findObjects(caller.appId, className, query);
  }

  /** find's page with the fields as JSON text, relation fields as their descriptors: for a page that sends them as stored. */
  async findJson(caller: QueryCaller, className: string, options: FindOptions): Promise<FoundJson[]> {
    const query = await this.findQuery(caller, className, options);
    if (query === null) return [];
    const [found, fields] = await Promise.all([
      this.store.findObjectsJson(caller.appId, className, query),
      this.relations.fieldsOf(caller.appId, className),
    ]);
    return found.map((one) => jsonWithDescriptors(one, fields));
  }

  /** The query the store runs for find (null: none, limit 0), after the checks. */
  private async findQuery(caller: QueryCaller, className: string, options: FindOptions): Promise<FindQuery | null> {
    checkClassName(className);
    checkFind(caller, className, options.where, options.order);
    if (options.limit === 0) return null;
    const where = await this.resolved(caller.appId, className, options.where);
    return { ...options, where, readers: readersFor(caller) };
  }

  /**
   * The objects `plan` includes from `roots`, read with the caller's readers: one statement per class
   * each level reaches. An object the caller may not read, or that is gone, is absent: its pointer stays bare.
   */
  async readIncluded(caller: Caller, roots: readonly StoredObject[], plan: IncludePlan): Promise<Included> {
    if (plan.children.size === 0 || roots.length === 0) return new Map();
    const readers = readersFor(caller);
    return readIncluded(roots, plan, async (className, ids) => {
      const fields = await this.relations.fieldsOf(caller.appId, className);
      const objects = (await this.store.getObjects(caller.appId, className, ids, readers)).map((object) => withDescriptors(object, fields));
      const rule = own(this.readRules, className);
      return rule ? objects.filter((object) => rule(caller, object)) : objects;
    });
  }

  /**
   * readIncluded of a one-level plan (includesAsStored) for a page sent as stored: each included object as its
   * JSON text (src/objects/include.ts, readIncludedJson). null when a class it reaches has a view or read rule
   * of its own (the built-in classes) or a target may hold a File value: the full path answers those.
   */
  async readIncludedJson(caller: Caller, roots: readonly JsonObject[], plan: IncludePlan): Promise<IncludedJson | null> {
    const readers = readersFor(caller);
    let plain = true;
    const included = await readIncludedJson(roots, plan, async (wanted) => {
      const classes = [...wanted.keys()];
      if (classes.some((className) => className.startsWith('_'))) {
        plain = false;
        return [];
      }
      const refs = [...wanted].flatMap(([className, ids]) => ids.map((objectId) => ({ className, objectId })));
      const [found, fields] = await Promise.all([
        this.store.getObjectsJson(caller.appId, refs, readers),
        Promise.all(classes.map((className) => this.relations.fieldsOf(caller.appId, className))),
      ]);
      if (found.some((one) => mayHoldFile(one.dataJson))) plain = false;
      return found.map((one) => jsonWithDescriptors(one, fields[classes.indexOf(one.className)]));
    });
    return plain ? included : null;
  }

  /**
   * The `_File` records of these ids as File values answer them. Read with the master key: a value in an
   * object the caller may read shows its file, as on the hosted service, whose File values carried the URL.
   */
  async fileRecords(appId: string, ids: readonly string[]): Promise<Map<string, JsonObject>> {
    const records = await this.store.getObjects(appId, '_File', ids, null);
    return new Map(records.map((record) => [record.objectId, this.fileView(toWire(record))]));
  }

  /** A `_File` record as answered: its url through fileUrl. */
  fileView(wire: JsonObject): JsonObject {
    if (typeof wire.url === 'string') wire.url = this.fileUrl(wire.url);
    return wire;
  }

  async count(caller: QueryCaller, className: string, where: Where): Promise<number> {
    checkClassName(className);
    checkFind(caller, className, where);
    return this.store.countObjects(caller.appId, className, await this.resolved(caller.appId, className, where), readersFor(caller));
  }

  /**
   * Runs a write checked by aclRefusal: first without the caller's roles, and once more with them only
   * when role entries of the ACL decide (rolesNeeded), so a write reads roles only where they matter.
   */
  private async underAcl(
    caller: Caller,
    write: (roles: ReadonlySet<string> | undefined) => Promise<WriteOutcome<ApiError>>,
  ): Promise<WriteOutcome<ApiError>> {
    const outcome = await write(undefined);
    if (outcome.ok || outcome.reason !== 'refused' || outcome.refusal !== rolesNeeded) return outcome;
    return write(await this.rolesOf(caller));
  }

  /** Whether the caller may read an object under this ACL, its roles included (read only when role entries decide), as get reads it. */
  async mayRead(caller: Caller, acl: Acl | null): Promise<boolean> {
    const plain = access(acl, caller, undefined, 'read');
    return plain === 'roles' ? access(acl, caller, await this.rolesOf(caller), 'read') === true : plain;
  }

  /** The caller's role names, read at most once a request (the Caller is the request's) and never kept longer. */
  private rolesOf(caller: Caller): Promise<ReadonlySet<string>> {
    let roles = this.callerRoles.get(caller);
    if (roles === undefined) {
      const userId = caller.userId ?? '';
      roles = this.store.roles.rolesOf(caller.appId, userId).then((names) => new Set(names));
      this.callerRoles.set(caller, roles);
    }
    return roles;
  }

  /** updatedAt never moves backwards, even if clocks of two nodes disagree slightly. */
  nextUpdatedAt(current: StoredObject): number {
    return Math.max(this.clock.now(), current.updatedAt);
  }
}

import type { AppSettings } from '../apps/settings.ts';
import type { AppRecord, Change, Condition, FindQuery, FoundJson, Readers, Refusal, SeenRow, StoredJson, StoredObject, Where, WriteOutcome } from '../objects/types.ts';
import type { AccountStore } from './account-store.ts';
import type { PushStore } from './push-store.ts';
import type { PushScheduleStore } from './push-schedule-store.ts';
import type { MailTokenStore } from './mail-token-store.ts';
import type { IdentityStore } from './identity-store.ts';
import type { SmsStore } from './sms-store.ts';
import type { QuotaPauses } from './quota-pause-store.ts';
import type { OpsStore } from './ops-store.ts';
import type { ClassIndexStore } from './class-index-store.ts';
import type { RelationChange, RelationStore } from './relation-store.ts';
import type { RoleStore } from './role-store.ts';
import type { SchemaStore } from './schema-store.ts';
import type { OperatorStore } from './operator-store.ts';
import type { StatsStore } from './stats-store.ts';
import type { LeaderboardStore } from './leaderboard-store.ts';
import type { StatusInboxStore } from './status-inbox-store.ts';

export interface ObjectRef {
  appId: string;
  className: string;
  objectId: string;
}

/**
 * Everything Roost keeps, in the domain's own verbs. Each verb is atomic on its own:
 * uniqueness comes from indexes, read-modify-write happens under a row lock.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Users' secrets, sessions and failed logins (src/storage/account-store.ts). */
  readonly accounts: AccountStore;
  /** Push records, fan-out jobs and device mailboxes (src/storage/push-store.ts). */
  readonly push: PushStore;
  /** Scheduled pushes not started yet (src/storage/push-schedule-store.ts). */
  readonly pushSchedule: PushScheduleStore;
  /** Tokens of mailed links: email verification, password reset (src/storage/mail-token-store.ts). */
  readonly mailTokens: MailTokenStore;
  /** Third-party identities bound to users (src/storage/identity-store.ts). */
  readonly identities: IdentityStore;
  /** SMS codes and per-number send counters (src/storage/sms-store.ts). */
  readonly sms: SmsStore;
  /** Phone makers paused for the day after a daily-quota error, shared by every node. */
  readonly quotaPauses: QuotaPauses;
  /** Bulk import and the gauges of GET /metrics (src/storage/ops-store.ts). */
  readonly ops: OpsStore;
  /** Indexes users declare on fields of their classes (src/storage/class-index-store.ts). */
  readonly classIndexes: ClassIndexStore;
  /** Members of objects' relations, and which fields are relations (src/storage/relation-store.ts). */
  readonly relations: RelationStore;
  /** The roles a user has, through role relations at any depth (src/storage/role-store.ts). */
  readonly roles: RoleStore;
  /** The fields of each class, their types as first written and their defaults (src/storage/schema-store.ts). */
  readonly schemas: SchemaStore;
  /** The console's operators, their sessions and the audit log (src/storage/operator-store.ts). */
  readonly operators: OperatorStore;
  /** Per-minute and per-hour counts of the console's overview charts (src/storage/stats-store.ts). */
  readonly stats: StatsStore;
  /** Leaderboards, their archived versions and their members' values (src/storage/leaderboard-store.ts). */
  readonly leaderboards: LeaderboardStore;
  /** Users' status inboxes: which statuses each holds, numbered, and what was read (src/storage/status-inbox-store.ts). */
  readonly statusInboxes: StatusInboxStore;

  /** A server secret shared by every node on this store, generated on first use. */
  serverSecret(): Promise<string>;

  /** False when an application already has that id: the id is unique, checked by the database. */
  createApp(app: AppRecord): Promise<boolean>;
  /** Creates `app` only while the store has no application: once, however many nodes start together. */
  createFirstApp(app: AppRecord): Promise<boolean>;
  getApp(appId: string): Promise<AppRecord | null>;
  listApps(): Promise<AppRecord[]>;
  /** Runs `change` on the current settings under a lock; its Refusal stores nothing and is the answer. Null: no such app. */
  updateAppSettings<R>(
    appId: string,
    change: (current: Partial<AppSettings>) => AppSettings | Refusal<R>,
  ): Promise<AppSettings | Refusal<R> | null>;
  /** Puts `newKey` in place of the app's key of that kind; the old one stays accepted for graceMs. Null: no such app. */
  rotateAppKey(appId: string, rotation: KeyRotation): Promise<AppRecord | null>;
  /** What deleting the application would remove; null: no such app. */
  appContents(appId: string): Promise<AppDeletion | null>;
  /** Removes the application and everything it holds, in one transaction. False: no such app. */
  deleteApp(appId: string): Promise<boolean>;
  /** Seals again secrets in clear (clearOnly) or sealed by a key that no longer seals; how many rows changed. */
  resealSecrets(clearOnly: boolean): Promise<number>;

  /** Inserts the object and applies its relation changes in one transaction; a clash of classes stores nothing. */
  insertObject(appId: string, object: StoredObject, relations?: readonly RelationChange[]): Promise<WriteOutcome>;
  getObject(ref: ObjectRef, readers: Readers): Promise<StoredObject | null>;
  /** getObject with the fields as JSON text (StoredJson), for a read that sends them on as they are. */
  getObjectJson(ref: ObjectRef, readers: Readers): Promise<StoredJson | null>;
  /**
   * The objects among `ids` of one class that the readers may read, in one statement however many ids
   * (an include level reads each class it reaches this way); any order, missing and implausible ids left out.
   */
  getObjects(appId: string, className: string, ids: readonly string[], readers: Readers): Promise<StoredObject[]>;
  /**
   * The objects among `refs` (of any classes) that the readers may read, each with its fields as the JSON text
   * JSON.stringify gives them, in one statement: an include level sent as stored. Any order; missing and implausible ids left out.
   */
  getObjectsJson(appId: string, refs: ReadonlyArray<{ className: string; objectId: string }>, readers: Readers): Promise<Array<FoundJson & { className: string }>>;
  findObjects(appId: string, className: string, query: FindQuery): Promise<StoredObject[]>;
  /** findObjects' page with each object's fields as the JSON text JSON.stringify gives them, for a page that sends them on as they are. */
  findObjectsJson(appId: string, className: string, query: FindQuery): Promise<FoundJson[]>;
  countObjects(appId: string, className: string, where: Where, readers: Readers): Promise<number>;
  classExists(appId: string, className: string): Promise<boolean>;
  /**
   * Locks the row, runs `change` (which checks write rights first), then checks `condition`, and stores
   * what `change` returned, with the relation changes, all in one transaction. The condition is never
   * evaluated on a row its readers may not read. `seen`: the row as a read earlier in the request found it
   * (a user's own session row), which a store may take for the current one while its version is unchanged.
   */
  updateObject<R = never>(
    ref: ObjectRef,
    change: Change<R>,
    condition?: Condition,
    relations?: readonly RelationChange[],
    seen?: SeenRow,
  ): Promise<WriteOutcome<R>>;
  /**
   * Locks the row; `guard` may refuse the delete; then checks `condition` as updateObject does. The
   * object's relation rows go with it, as owner and as member (RelationStore).
   */
  deleteObject<R = never>(
    ref: ObjectRef,
    guard: (current: StoredObject) => Refusal<R> | null,
    condition?: Condition,
  ): Promise<WriteOutcome<R>>;

  close(): Promise<void>;
}

export interface KeyRotation {
  kind: 'appKey' | 'masterKey';
  newKey: string;
  graceMs: number;
  now: number;
}

export interface AppDeletion {
  objects: number;
  users: number;
  installations: number;
  roles: number;
  classes: number;
  leaderboards: number;
}

import type { StoredObject, UniqueField } from '../objects/types.ts';
import type { SessionSeal } from './account-store.ts';
import type { Identity } from './identity-store.ts';

/** One object of a data export, ready to store (src/import/). */
export interface ImportRecord {
  object: StoredObject;
  /** `_User` only: the stored password hash (an imported legacy one), or null. */
  passwordHash: string | null;
  /** `_User` only: the exported session token, sealed, so signed-in apps stay signed in. */
  session: SessionSeal | null;
}

/**
 * One store call of an import: records of one class of one application, shaped for the store
 * by `prepareImportBatch` (src/storage/import-batch.ts). The import's parse threads prepare
 * them, so what reaches the thread that talks to the database is what that store loads fastest.
 */
export type ImportBatch = RecordBatch | EncodedBatch;

interface BatchOf {
  appId: string;
  className: string;
}

/** The records as they are (SQLite, and any store without a bulk format). */
export interface RecordBatch extends BatchOf {
  kind: 'records';
  records: ImportRecord[];
}

/**
 * The rows already in the store's bulk-load format, one transferable buffer, and what the store
 * answers each record by: its objectId and its authData identities (`record`: its position).
 */
export interface EncodedBatch extends BatchOf {
  kind: 'encoded';
  objectIds: string[];
  identities: Array<Identity & { record: number }>;
  rows: Uint8Array;
}

export type ImportStatus =
  /** Stored; `droppedAuthData` names authData entries whose account another user already holds. */
  | { kind: 'inserted'; droppedAuthData: string[] }
  /** An object with this objectId is already there: skipped, as the hosted service's import did. */
  | { kind: 'exists' }
  /** Another object holds one of its unique values; null when the index cannot be told. */
  | { kind: 'conflict'; field: UniqueField | 'sessionToken' | null };

/** Gauges of the push queue, read by GET /metrics at scrape time. */
export interface QueueDepth {
  /** Pushes not yet fully paged whose time has come. */
  due: number;
  /** Pushes waiting for a later push_time. */
  scheduled: number;
  /** Pages routed but not yet delivered (in flight or waiting for a retry after a dead worker). */
  pagesPending: number;
}

/**
 * How many objects a class holds: counted exactly up to a bound, beyond it the planner's estimate
 * (PostgreSQL) or only "more than the bound" (SQLite), so no page counts a million rows.
 */
export interface ClassSize {
  count: number;
  /** `exact`: counted; `estimate`: the database's statistics; `atLeast`: more than the bound, no estimate. */
  kind: 'exact' | 'estimate' | 'atLeast';
}

/** The operator's verbs: bulk import of an export, and the gauges monitoring reads. */
export interface OpsStore {
  /**
   * Inserts a batch of objects in one transaction, with their promoted columns, secrets and
   * third-party identity rows; an objectId already present is skipped. Answers one status per
   * record, in order.
   */
  importObjects(batch: ImportBatch): Promise<ImportStatus[]>;
  /** Those of these objectIds of a class that are stored already: a re-run skips them before sealing and encoding. */
  presentObjectIds(appId: string, className: string, objectIds: string[]): Promise<Set<string>>;
  /** Refreshes the planner's statistics after a bulk load, so queries use the right indexes at once. */
  finishImport(): Promise<void>;
  queueDepth(now: number): Promise<QueueDepth>;
  /** The objects of a class, every one (no ACL): exact when at most `exactUpTo`, an estimate or a lower bound beyond. */
  classSize(appId: string, className: string, exactUpTo: number): Promise<ClassSize>;
}

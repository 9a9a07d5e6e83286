import type { Caller } from '../objects/acl.ts';
import type { AppRecord, StoredObject } from '../objects/types.ts';

/** The caller of an account operation: the request context minus HTTP. */
export interface AccountCaller extends Caller {
  app: AppRecord;
  /** The token the request carried; `userId` is null when it is unknown or stale. */
  sessionToken: string | null;
  /** The token's user as the request's own session lookup read it (the read that set `userId`); users/me answers with it. */
  sessionUser: StoredObject | null;
  /** The store's version of sessionUser's row at that read (null if none): the user's update of itself writes against it. */
  sessionVersion: string | null;
}

/** A user together with the session token a login-type response carries. */
export interface SignedIn {
  user: StoredObject;
  sessionToken: string;
}

/** Told when a user's address needs confirming; sends the verification mail without delaying the request. */
export type EmailToVerify = (app: AppRecord, user: StoredObject) => void;

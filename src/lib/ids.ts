import { randomBytes } from 'node:crypto';
import { customAlphabet } from 'nanoid';

const lowerAlnum = '0123456789abcdefghijklmnopqrstuvwxyz';
const mixedAlnum = lowerAlnum + 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** This process's part of every object id: random, so processes and nodes never share one. */
const processPart = randomBytes(5).toString('hex');
/** Ids this process issued, from a random start (as MongoDB's ObjectId counter). */
let counter = randomBytes(3).readUIntBE(0, 3);

/**
 * Object ids as the hosted service's (MongoDB ObjectIds): 24 lowercase hex characters, the creation
 * time in seconds (8), this process (10), a counter (6). Ids compare as strings in time order, so
 * `order=objectId` and the SDK's `Query#each` (which pages by `objectId > last`) follow time; within a
 * second, one process's ids follow the order it issued them.
 */
export function newObjectId(now: number): string {
  const seconds = Math.min(Math.max(Math.floor(now / 1000), 0), 0xffffffff);
  counter = (counter + 1) & 0xffffff;
  return seconds.toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0');
}

/** Application ids and keys: long enough to be unguessable, short enough to paste. */
export const newAppId = customAlphabet(mixedAlnum, 24);
export const newAppKey = customAlphabet(mixedAlnum, 24);

/** Random usernames for users created through authData: 25 lowercase alphanumerics, as the service does. */
export const newRandomUsername = customAlphabet(lowerAlnum, 25);

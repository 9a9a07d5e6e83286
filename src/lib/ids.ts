import { customAlphabet } from 'nanoid';

const lowerAlnum = '0123456789abcdefghijklmnopqrstuvwxyz';
const mixedAlnum = lowerAlnum + 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Object ids look like the hosted service's: 24 lowercase alphanumerics (~124 bits). */
export const newObjectId = customAlphabet(lowerAlnum, 24);

/** Application ids and keys: long enough to be unguessable, short enough to paste. */
export const newAppId = customAlphabet(mixedAlnum, 24);
export const newAppKey = customAlphabet(mixedAlnum, 24);

/** Random usernames for users created through authData: 25 lowercase alphanumerics, as the service does. */
export const newRandomUsername = customAlphabet(lowerAlnum, 25);

import type { SchemaObject } from 'ajv';
import { objectBody } from '../schema.ts';

/**
 * Bodies of the users routes (src/http/routes/users.ts). Each check sits in the order the account
 * code made it before these schemas, so a body with several faults gets the answer it always got.
 */

const identifiers = ['username', 'email', 'mobilePhoneNumber'] as const;
type Identifier = (typeof identifiers)[number];
/** Present and not null: an identifier the caller gave. */
const given = (name: Identifier): SchemaObject => ({ required: [name], properties: { [name]: { not: { type: 'null' } } } });
/** Not blank as String.prototype.trim sees it (\S: neither whitespace nor a line terminator). */
const nullOrNonBlank = { anyOf: [{ type: 'null' }, { type: 'string', pattern: '\\S' }] };
const passwordMissing = 'passwordMissing';

/**
 * POST /1.1/login: password and one of username, email, mobilePhoneNumber; given several, the first of them
 * (the account code's order) logs in and the others are not looked at, as hosted: the Python SDK posts every
 * field the user holds (User.login). smsCode without password is the SMS flow's login, checked by it
 * (src/accounts/sms.ts).
 */
export const loginBody: SchemaObject = {
  ...objectBody,
  if: { required: ['smsCode'], not: { required: ['password'] } },
  else: {
    allOf: [
      { anyOf: identifiers.map(given), 'x-error': { kind: 'usernameMissing', message: 'Log in with a username, an email or a mobilePhoneNumber.' } },
      { properties: { username: { ...nullOrNonBlank, 'x-error': 'usernameBlank' } } },
      { if: given('username'), else: { properties: { email: { ...nullOrNonBlank, 'x-error': 'invalidEmail' } } } },
      {
        if: { anyOf: [given('username'), given('email')] },
        else: { properties: { mobilePhoneNumber: { ...nullOrNonBlank, 'x-error': 'invalidPhone' } } },
      },
      {
        required: ['password'],
        properties: {
          password: {
            'x-missing': passwordMissing,
            allOf: [
              { not: { type: 'null' }, 'x-error': passwordMissing },
              { type: 'string', minLength: 1, 'x-error': 'passwordBlank' },
            ],
          },
        },
      },
    ],
  },
};

const oldPassword = { kind: 'passwordMissing', message: 'old_password is missing or empty.' } as const;
export const updatePasswordBody: SchemaObject = {
  ...objectBody,
  required: ['old_password'],
  properties: { old_password: { type: 'string', minLength: 1, 'x-error': oldPassword, 'x-missing': oldPassword } },
};

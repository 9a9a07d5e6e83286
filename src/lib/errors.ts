/**
 * The one error type of the API and the catalogue of every code it can carry.
 * README.md "Error codes" lists the same rows; test/errors.test.ts keeps them in step.
 */
export const catalogue = {
  other: { code: 1, status: 400, message: 'Internal server error. No information available.' },
  mailLinkInvalid: { code: 1, status: 400, message: 'The link is invalid or has expired.' },
  tooManyIds: { code: 1, status: 400, message: 'One DELETE may name at most 1000 objects: delete more in several requests.' },
  notSupported: { code: 1, status: 400, message: 'Not supported yet.' },
  roleAclRequired: { code: 1, status: 400, message: 'Role ACL is required.' },
  unknownOperation: { code: 1, status: 400, message: 'Unsupported operation.' },
  fileKeyNeedsMaster: { code: 1, status: 400, message: 'Unsupported file key. Please use masterKey to set file key.' },
  invalidQuery: { code: 102, status: 400, message: 'Invalid query.' },
  invalidRegex: { code: 102, status: 400, message: 'Invalid regular expression.' },
  invalidCursor: { code: 102, status: 400, message: 'Invalid scan cursor: send the cursor the previous page of the same scan answered.' },
  queryNotSupported: { code: 102, status: 400, message: 'Not supported yet: this query feature.' },
  objectNotFound: { code: 101, status: 404, message: "Class or object doesn't exists." },
  indexNotFound: { code: 101, status: 404, message: 'The class has no index of that name.' },
  invalidClassName: {
    code: 103,
    status: 400,
    message: 'Missing or invalid classname. Classnames are case-sensitive. They must start with a letter, and a-zA-Z0-9_ are the only valid characters.',
  },
  missingObjectId: { code: 104, status: 400, message: 'Missing object id.' },
  invalidKeyName: { code: 105, status: 400, message: "Invalid key name. Keys are case-sensitive and 'a-zA-Z0-9_' are the only valid characters." },
  invalidPointer: { code: 106, status: 400, message: 'Malformed pointer.' },
  invalidJson: { code: 107, status: 400, message: 'Malformed json object. A json dictionary is expected.' },
  incorrectType: { code: 111, status: 400, message: 'Invalid value type.' },
  invalidGeoPoint: { code: 302, status: 400, message: 'Invalid GeoPoint values.' },
  invalidChannel: { code: 112, status: 400, message: 'Invalid channel name.' },
  missingRequired: { code: 113, status: 400, message: 'A required field is missing.' },
  objectTooLarge: { code: 116, status: 400, message: 'The object is too large.' },
  operationForbidden: { code: 119, status: 403, message: "That operation isn't allowed for clients." },
  invalidNestedKey: { code: 121, status: 400, message: "Keys must not contain '$' or '.'." },
  invalidFileName: { code: 122, status: 400, message: 'Invalid file name.' },
  invalidAcl: { code: 123, status: 400, message: 'Invalid ACL.' },
  queryTimeout: { code: 124, status: 503, message: 'The request took too long and was stopped.' },
  invalidEmail: { code: 125, status: 400, message: 'The email address is invalid.' },
  invalidPhone: { code: 127, status: 400, message: 'The mobile phone number is invalid.' },
  invalidRelation: { code: 128, status: 400, message: 'Invalid relation data.' },
  duplicateValue: { code: 137, status: 400, message: 'A unique field was given a value that is already taken.' },
  indexDuplicates: { code: 137, status: 400, message: 'Objects of the class share values of the keys: the unique index was not built.' },
  invalidRoleName: { code: 139, status: 400, message: "Role's name is invalid." },
  roleNameImmutable: { code: 139, status: 400, message: "A role's name can only be set before it has been saved." },
  scheduledPushQuota: { code: 140, status: 400, message: 'Too many scheduled pushes are waiting.' },
  invalidIndex: { code: 1, status: 400, message: 'Invalid index: a name and keys as {"field": 1 or -1}.' },
  indexExists: { code: 1, status: 400, message: 'The class already has an index of that name.' },
  indexBuildFailed: { code: 1, status: 400, message: 'The index could not be built.' },
  usernameMissing: { code: 200, status: 400, message: 'Username is missing or empty.' },
  passwordMissing: { code: 201, status: 400, message: 'Password is missing or empty.' },
  usernameTaken: { code: 202, status: 400, message: 'Username has already been taken.' },
  emailTaken: { code: 203, status: 400, message: 'Email has already been taken.' },
  emailMissing: { code: 204, status: 400, message: 'The email is missing, and must be specified.' },
  emailNotFound: { code: 205, status: 400, message: 'No user found with this email.' },
  sessionMissing: { code: 206, status: 403, message: 'The user cannot be altered by a client without the session.' },
  linkedElsewhere: { code: 208, status: 400, message: 'An existing account already linked to another user.' },
  passwordMismatch: { code: 210, status: 400, message: 'The username and password mismatch.' },
  userNotFound: { code: 211, status: 400, message: 'Could not find user.' },
  phoneMissing: { code: 212, status: 400, message: 'The mobile phone number is missing, and must be specified.' },
  phoneNotFound: { code: 213, status: 400, message: 'Mobile phone number is not found.' },
  phoneTaken: { code: 214, status: 400, message: 'Mobile phone number has already been taken.' },
  phoneNotVerified: { code: 215, status: 400, message: 'Mobile phone number is not verified.' },
  emailNotVerified: { code: 216, status: 400, message: 'Email address is not verified.' },
  usernameBlank: { code: 217, status: 400, message: 'Invalid username, it must be a non-blank string.' },
  passwordBlank: { code: 218, status: 400, message: 'Invalid password, it must be a non-blank string.' },
  loginLocked: {
    code: 219,
    status: 400,
    message: '登录失败次数超过限制，请稍候再试，或者通过忘记密码重设密码。',
  },
  linkedIdMissing: { code: 250, status: 400, message: 'The third-party account id is missing from authData.' },
  invalidLinkedSession: { code: 251, status: 400, message: 'The third-party access token is invalid.' },
  cqlSyntax: { code: 300, status: 400, message: 'CQL syntax error.' },
  batchNotRelation: { code: 304, status: 400, message: 'A Batch operation may hold only AddRelation and RemoveRelation.' },
  conditionFailed: { code: 305, status: 400, message: 'No effect on updating/deleting a document.' },
  unauthorized: { code: 401, status: 401, message: 'Unauthorized.' },
  forbidden: { code: 403, status: 403, message: 'Forbidden to access.' },
  aclWriteDenied: { code: 403, status: 403, message: "Forbidden writing by object's ACL." },
  installationOwned: { code: 403, status: 403, message: "An installation bound to a user is changed, and a user bound, only with that user's session or the master key." },
  masterKeyRequired: { code: 403, status: 403, message: 'Forbidden: this operation needs the master key.' },
  staleSession: { code: 403, status: 403, message: 'The session token is invalid or has expired.' },
  fileTokenInvalid: { code: 403, status: 403, message: 'The file upload token is invalid or has expired.' },
  originNotAllowed: { code: 403, status: 403, message: 'Access denied by api domain white list.' },
  routeNotFound: { code: 404, status: 404, message: 'Not supported: Roost has no such API.' },
  requestTimeout: { code: 408, status: 408, message: 'The request did not arrive in time.' },
  payloadTooLarge: { code: 413, status: 413, message: 'Request entity too large.' },
  unsupportedMediaType: { code: 415, status: 415, message: 'Request bodies must be JSON (application/json).' },
  rateLimited: { code: 429, status: 429, message: 'Too many requests.' },
  headersTooLarge: { code: 431, status: 431, message: 'Request header fields too large.' },
  unavailable: { code: 503, status: 503, message: 'The service is temporarily unavailable.' },
  smsTooFrequent: { code: 601, status: 429, message: 'SMS codes are sent to one number at most once a minute and ten times a day.' },
  smsSendFailed: { code: 602, status: 503, message: 'The SMS message could not be sent.' },
  invalidSmsCode: { code: 603, status: 400, message: 'Invalid SMS code.' },
  unknownKey: { code: 700, status: 400, message: 'Nonexistent query or order key.' },
  leaderboardMasterKey: { code: 1, status: 400, message: 'The request must be signed by master key.' },
  invalidLeaderboard: { code: 1, status: 400, message: 'Invalid leaderboard parameters.' },
  statisticNotFound: { code: 2100, status: 400, message: 'statisticName not found.' },
  leaderboardExists: { code: 2101, status: 400, message: 'A leaderboard of that statisticName already exists.' },
  leaderboardMemberType: { code: 2102, status: 400, message: 'The leaderboard ranks members of another type.' },
  statisticsOwnerOnly: { code: 403, status: 403, message: "A user's statistics are changed with that user's session or the master key." },
} as const satisfies Record<string, { code: number; status: number; message: string }>;

export type ErrorKind = keyof typeof catalogue;

export class ApiError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  readonly code: number;

  constructor(kind: ErrorKind, message?: string) {
    const entry = catalogue[kind];
    super(message ?? entry.message);
    this.kind = kind;
    this.status = entry.status;
    this.code = entry.code;
  }

  toBody(): { code: number; error: string } {
    return { code: this.code, error: this.message };
  }
}

export function fail(kind: ErrorKind, message?: string): never {
  throw new ApiError(kind, message);
}

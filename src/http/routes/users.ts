import type { StoredObject } from '../../objects/types.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountService } from '../../accounts/service.ts';
import { refreshedWire, toSessionWire, toUserWire, touchedUserFields, updatedWire, withSessionToken } from '../../accounts/user-fields.ts';
import { touchedFields } from '../../objects/wire.ts';
import { isObject } from '../../objects/values.ts';
import { conditionOf, createQuery, deleteQuery, flag, listParams, listQuery, param, queryOf, sendsObjectBack, updateQuery } from '../params.ts';
import type { ObjectService } from '../../objects/service.ts';
import { parseInclude } from '../../objects/include.ts';
import { answerObject, answerObjects, withFileRecordsOf } from '../answer.ts';
import type { ClassHandlers } from './classes.ts';
import type { ClassAccess } from '../class-access.ts';
import { declared, objectBody, pathParams, queryParams, writeBody } from '../schema.ts';
import { loginBody, updatePasswordBody } from './user-schemas.ts';

interface UserParams {
  objectId: string;
}
const userParams = pathParams('objectId');

/**
 * The `_User` handlers; both /1.1/users… and /1.1/classes/_User… (what the SDKs use, batch
 * included) call these, so the two path families cannot drift apart.
 */
/** A new user's Location, whichever path created it: the hosted service answered sign-ups with this one (relative). */
export function userLocation(objectId: string): string {
  return `/1.1/classes/_User/${objectId}`;
}

export function userHandlers(accounts: AccountService, objects: ObjectService) {
  return {
    async create(request: FastifyRequest, reply: FastifyReply) {
      // authData: sign in the bound user (200) or sign a new one up (201); SPEC §4.1 row 2.
      if (isObject(request.body) && request.body.authData !== undefined) {
        const failOnNotExist = flag(queryOf(request), 'failOnNotExist');
        const signedIn = await accounts.thirdParty.signIn(request.ctx, request.body, { failOnNotExist });
        reply.status(signedIn.created ? 201 : 200).header('Location', userLocation(signedIn.user.objectId));
        return withFileRecordsOf(objects, request.ctx.appId, toSessionWire(signedIn.user, signedIn.sessionToken));
      }
      const { user, sessionToken } = await accounts.signup(request.ctx, request.body);
      reply.status(201).header('Location', userLocation(user.objectId));
      return withFileRecordsOf(objects, request.ctx.appId, toSessionWire(user, sessionToken));
    },

    async get(request: FastifyRequest, _reply: FastifyReply, objectId: string) {
      const user = await accounts.get(request.ctx, objectId);
      return answerObject(objects, request.ctx, user, listParams(queryOf(request)));
    },

    async update(request: FastifyRequest, _reply: FastifyReply, objectId: string) {
      const query = queryOf(request);
      const user = await accounts.update(request.ctx, objectId, request.body, conditionOf(query));
      if (await sendsObjectBack(query, objects, request.ctx, user)) {
        const touched = touchedFields(toUserWire(user, { returnAcl: flag(query, 'returnACL'), viewer: request.ctx }), touchedUserFields(request.body));
        return withFileRecordsOf(objects, request.ctx.appId, touched);
      }
      return updatedWire(user);
    },

    async remove(request: FastifyRequest, _reply: FastifyReply, objectId: string) {
      await accounts.remove(request.ctx, objectId, conditionOf(queryOf(request)));
      return {};
    },

    async find(request: FastifyRequest) {
      const params = listParams(queryOf(request));
      const [results, count] = await Promise.all([
        accounts.find(request.ctx, params),
        params.count ? accounts.count(request.ctx, params.where) : Promise.resolve(undefined),
      ]);
      const body: { results: unknown[]; count?: number } = { results: await answerObjects(objects, request.ctx, results, params) };
      if (count !== undefined) body.count = count;
      return body;
    },
  };
}

/**
 * What a user update answers before its body is read, in the order it always did: the where condition's
 * syntax (parsed as the update's argument), then who may write the user and what the condition reads.
 */
function admitUpdate(accounts: AccountService, request: FastifyRequest, objectId: string): void {
  accounts.admitWrite(request.ctx, objectId, conditionOf(queryOf(request)));
}

/** What /1.1/classes/_User… dispatches to (see registerClassRoutes' builtIn). */
export function userClassHandlers(accounts: AccountService, objects: ObjectService): ClassHandlers {
  const users = userHandlers(accounts, objects);
  return {
    create: (request, reply) => users.create(request, reply),
    get: (request, reply, _className, objectId) => users.get(request, reply, objectId),
    update: (request, reply, _className, objectId) => users.update(request, reply, objectId),
    remove: (request, reply, _className, objectId) => users.remove(request, reply, objectId),
    find: (request) => users.find(request),
    admit: { update: async (request, objectId) => admitUpdate(accounts, request, objectId) },
  };
}

/** `_User` as scan and CQL reach it: the account service, whose rules every users route follows. */
export function userClassAccess(accounts: AccountService): Partial<ClassAccess> {
  return {
    find: (ctx, _className, options) => accounts.find(ctx, options),
    count: (ctx, _className, where) => accounts.count(ctx, where),
    create: async (ctx, _className, body) => (await accounts.signup(ctx, body)).user,
    update: (ctx, _className, objectId, body, condition) => accounts.update(ctx, objectId, body, condition),
    remove: (ctx, _className, objectId, condition) => accounts.remove(ctx, objectId, condition),
  };
}

export function registerUserRoutes(app: FastifyInstance, options: { accounts: AccountService; objects: ObjectService }): void {
  const { accounts, objects } = options;
  const users = userHandlers(accounts, objects);
  // The user as every read of it answers: its relation fields as descriptors, its File values as their records.
  const sessionAnswer = async (appId: string, user: StoredObject, sessionToken: string) =>
    withFileRecordsOf(objects, appId, toSessionWire((await objects.describe(appId, [user]))[0], sessionToken));

  // Own session or master, asked before the body is read (as the account code did before these schemas).
  const self = async (request: FastifyRequest) => accounts.requireSelf(request.ctx, (request.params as UserParams).objectId);
  const admitUserUpdate = async (request: FastifyRequest) => admitUpdate(accounts, request, (request.params as UserParams).objectId);

  app.post('/1.1/users', declared({ body: objectBody, querystring: createQuery }), (request, reply) =>
    users.create(request, reply),
  );
  app.get('/1.1/users', declared({ querystring: listQuery }), (request) => users.find(request));
  app.post<{ Body: Record<string, unknown> }>('/1.1/login', declared({ body: loginBody }), async (request) => {
    const { user, sessionToken } = await accounts.login(request.ctx, request.body);
    return sessionAnswer(request.ctx.appId, user, sessionToken);
  });
  app.get('/1.1/users/me', declared({ querystring: queryParams('include', 'session_token') }), async (request) => {
    const { user, sessionToken } = await accounts.me(request.ctx);
    const include = parseInclude(param(queryOf(request), 'include'));
    if (include === null) return sessionAnswer(request.ctx.appId, user, sessionToken);
    // The user reads itself: its includes expanded as any read's, then its token as toSessionWire adds it.
    return withSessionToken(await answerObject(objects, request.ctx, user, { include, projection: null, returnAcl: false }), sessionToken);
  });
  app.get<{ Params: UserParams }>('/1.1/users/:objectId', declared({ params: userParams, querystring: listQuery }), (request, reply) =>
    users.get(request, reply, request.params.objectId),
  );
  app.put<{ Params: UserParams }>(
    '/1.1/users/:objectId',
    { ...declared({ params: userParams, body: writeBody, querystring: updateQuery }), preValidation: admitUserUpdate },
    (request, reply) => users.update(request, reply, request.params.objectId),
  );
  app.delete<{ Params: UserParams }>('/1.1/users/:objectId', declared({ params: userParams, querystring: deleteQuery }), (request, reply) =>
    users.remove(request, reply, request.params.objectId),
  );
  app.put<{ Params: UserParams }>('/1.1/users/:objectId/refreshSessionToken', declared({ params: userParams }), async (request) => {
    const { user, sessionToken } = await accounts.refreshSessionToken(request.ctx, request.params.objectId);
    return refreshedWire(user, sessionToken);
  });
  app.put<{ Params: UserParams; Body: { old_password: string } }>(
    '/1.1/users/:objectId/updatePassword',
    { ...declared({ params: userParams, body: updatePasswordBody }), preValidation: self },
    async (request) => {
    const { user, sessionToken } = await accounts.updatePassword(request.ctx, request.params.objectId, request.body);
    return { ...updatedWire(user), sessionToken };
    },
  );
}

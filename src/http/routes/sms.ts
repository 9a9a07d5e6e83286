import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountService } from '../../accounts/service.ts';
import { toSessionWire } from '../../accounts/user-fields.ts';
import { isoDate } from '../../lib/clock.ts';
import { userLocation } from './users.ts';
import { declared, objectBody, pathParams } from '../schema.ts';

/** Minutes a code lives, where the caller may choose (requestSmsCode, requestChangePhoneNumber). */
const ttlBody = {
  ...objectBody,
  properties: { ttl: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 1, maximum: 30 }], 'x-error': { kind: 'incorrectType', message: 'ttl must be 1 to 30 minutes.' } } },
};
const codeParams = pathParams('code');
/** The number the code went to, when given; a body of any other shape is read as none (src/accounts/sms.ts). */
const verifyBody = { properties: { mobilePhoneNumber: {} } };

interface CodeParams {
  code: string;
}
type ObjectBody = { Body: Record<string, unknown> };

/** Phone numbers and SMS codes (reference §2.1); the flows live in src/accounts/sms.ts. */
export function registerSmsRoutes(app: FastifyInstance, options: { accounts: AccountService }): void {
  const sms = options.accounts.sms;
  // A session is asked for before the body is read (as the domain did before it had schemas).
  const signedIn = async (request: FastifyRequest) => void sms.requireUser(request.ctx);

  app.post<ObjectBody>('/1.1/requestSmsCode', declared({ body: ttlBody }), async (request) => {
    await sms.requestCode(request.ctx, request.body, 'sms');
    return {};
  });
  app.post<{ Params: CodeParams }>('/1.1/verifySmsCode/:code', declared({ params: codeParams, body: verifyBody }), async (request) => {
    await sms.verifyCode(request.ctx, request.params.code, request.body);
    return {};
  });
  app.post<ObjectBody>('/1.1/requestLoginSmsCode', declared({ body: objectBody }), async (request) => {
    await sms.requestCode(request.ctx, request.body, 'login');
    return {};
  });
  app.post<ObjectBody>('/1.1/usersByMobilePhone', declared({ body: objectBody }), async (request, reply) => {
    const signedIn = await sms.signUpOrLogIn(request.ctx, request.body);
    reply.status(signedIn.created ? 201 : 200).header('Location', userLocation(signedIn.user.objectId));
    return toSessionWire(signedIn.user, signedIn.sessionToken);
  });
  app.post<ObjectBody>('/1.1/requestMobilePhoneVerify', declared({ body: objectBody }), async (request) => {
    await sms.requestCode(request.ctx, request.body, 'verify');
    return {};
  });
  app.post<{ Params: CodeParams }>('/1.1/verifyMobilePhone/:code', declared({ params: codeParams, body: verifyBody }), async (request) => {
    const user = await sms.verifyPhone(request.ctx, request.params.code, request.body);
    return { updatedAt: isoDate(user.updatedAt), objectId: user.objectId };
  });
  app.post<ObjectBody>('/1.1/requestPasswordResetBySmsCode', declared({ body: objectBody }), async (request) => {
    await sms.requestCode(request.ctx, request.body, 'reset');
    return {};
  });
  app.post<ObjectBody>('/1.1/requestChangePhoneNumber', { ...declared({ body: ttlBody }), preValidation: signedIn }, async (request) => {
    await sms.requestPhoneChange(request.ctx, request.body);
    return {};
  });
  // The code before the session (src/accounts/sms.ts changePhone).
  app.post<ObjectBody>('/1.1/changePhoneNumber', declared({ body: objectBody }), async (request) => {
    const user = await sms.changePhone(request.ctx, request.body);
    return { updatedAt: isoDate(user.updatedAt), objectId: user.objectId };
  });
  app.put<{ Params: CodeParams } & ObjectBody>('/1.1/resetPasswordBySmsCode/:code', declared({ params: codeParams, body: objectBody }), async (request) => {
    await sms.resetPassword(request.ctx, request.params.code, request.body);
    return {};
  });
}

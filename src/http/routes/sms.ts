import type { FastifyInstance } from 'fastify';
import type { AccountService } from '../../accounts/service.ts';
import { toSessionWire } from '../../accounts/user-fields.ts';
import { isoDate } from '../../lib/clock.ts';
import { userLocation } from './users.ts';

interface CodeParams {
  code: string;
}

/** Phone numbers and SMS codes (reference §2.1); the flows live in src/accounts/sms.ts. */
export function registerSmsRoutes(app: FastifyInstance, options: { accounts: AccountService }): void {
  const sms = options.accounts.sms;

  app.post('/1.1/requestSmsCode', async (request) => {
    await sms.requestCode(request.ctx, request.body, 'sms');
    return {};
  });
  app.post<{ Params: CodeParams }>('/1.1/verifySmsCode/:code', async (request) => {
    await sms.verifyCode(request.ctx, request.params.code, request.body);
    return {};
  });
  app.post('/1.1/requestLoginSmsCode', async (request) => {
    await sms.requestCode(request.ctx, request.body, 'login');
    return {};
  });
  app.post('/1.1/usersByMobilePhone', async (request, reply) => {
    const signedIn = await sms.signUpOrLogIn(request.ctx, request.body);
    reply.status(signedIn.created ? 201 : 200).header('Location', userLocation(signedIn.user.objectId));
    return toSessionWire(signedIn.user, signedIn.sessionToken);
  });
  app.post('/1.1/requestMobilePhoneVerify', async (request) => {
    await sms.requestCode(request.ctx, request.body, 'verify');
    return {};
  });
  app.post<{ Params: CodeParams }>('/1.1/verifyMobilePhone/:code', async (request) => {
    const user = await sms.verifyPhone(request.ctx, request.params.code, request.body);
    return { updatedAt: isoDate(user.updatedAt), objectId: user.objectId };
  });
  app.post('/1.1/requestPasswordResetBySmsCode', async (request) => {
    await sms.requestCode(request.ctx, request.body, 'reset');
    return {};
  });
  app.post('/1.1/requestChangePhoneNumber', async (request) => {
    await sms.requestPhoneChange(request.ctx, request.body);
    return {};
  });
  app.post('/1.1/changePhoneNumber', async (request) => {
    const user = await sms.changePhone(request.ctx, request.body);
    return { updatedAt: isoDate(user.updatedAt), objectId: user.objectId };
  });
  app.put<{ Params: CodeParams }>('/1.1/resetPasswordBySmsCode/:code', async (request) => {
    await sms.resetPassword(request.ctx, request.params.code, request.body);
    return {};
  });
}

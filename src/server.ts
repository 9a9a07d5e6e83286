import { join } from 'node:path';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import { acceptedKeys } from './apps/keys.ts';
import cors from '@fastify/cors';
import compress from '@fastify/compress';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Clock } from './lib/clock.ts';
import { ApiError } from './lib/errors.ts';
import type { Store } from './storage/store.ts';
import { AppRegistry } from './apps/registry.ts';
import { ObjectService } from './objects/service.ts';
import { ClassSchemas } from './objects/schemas.ts';
import { installationClass, mayTouchInstallation } from './push/installations.ts';
import { authenticate, type SessionResolver } from './http/context.ts';
import { installErrorHandling } from './http/errors.ts';
import { clientErrorHandler, endBodyTurn, jsonParser } from './http/body.ts';
import { lazyChildLogger } from './http/request-logger.ts';
import { genericHandlers, registerClassRoutes } from './http/routes/classes.ts';
import { registerBatchRoutes } from './http/routes/batch.ts';
import { registerCloudQueryRoutes } from './http/routes/cloud-query.ts';
import { registerScanRoutes } from './http/routes/scan.ts';
import { registerRoleRoutes } from './http/routes/roles.ts';
import { registerBatchSaveRoute } from './http/routes/batch-save.ts';
import { unsupportedClassAccess, unsupportedClassHandlers } from './http/unsupported.ts';
import { registerUserRoutes, userClassAccess, userClassHandlers } from './http/routes/users.ts';
import { classAccess } from './http/class-access.ts';
import { registerSmsRoutes } from './http/routes/sms.ts';
import { AccountService } from './accounts/service.ts';
import { registerSettingsRoutes } from './http/routes/settings.ts';
import { registerIndexRoutes } from './http/routes/indexes.ts';
import { registerSchemaRoutes } from './http/routes/schemas.ts';
import { ClassIndexes } from './objects/class-indexes.ts';
import { registerDateRoute, registerHealthRoutes } from './http/routes/health.ts';
import { PushService } from './push/service.ts';
import type { VendorDispatch } from './push/vendor-dispatch.ts';
import { createMixedPush } from './push/mixed-push.ts';
import { connectQuotaPauses } from './storage/redis/quota-pause-store.ts';
import { registerVendorCallbackRoutes } from './http/routes/vendor-callbacks.ts';
import { installationClassAccess, installationHandlers, registerInstallationRoutes } from './http/routes/installations.ts';
import { registerPushRoutes } from './http/routes/push.ts';
import { registerPushChannel } from './http/routes/push-channel.ts';
import { registerPushConnection } from './http/routes/push-connection.ts';
import { createMailer, type Mailer } from './mail/mailer.ts';
import { MailLinks } from './accounts/mail-links.ts';
import { EmailVerification } from './accounts/email-verification.ts';
import { PasswordReset } from './accounts/password-reset.ts';
import { UserAdmin } from './accounts/user-admin.ts';
import { registerEmailPages, registerEmailRoutes } from './http/routes/email.ts';
import { PrometheusMetrics, registerMetricsRoutes } from './http/routes/metrics.ts';
import { countAnswer } from './http/routes/console-overview.ts';
import { TrafficStats } from './console/traffic.ts';
import { teeMetrics } from './lib/metrics.ts';
import { FileService } from './files/service.ts';
import { LocalDiskBackend } from './files/local-disk.ts';
import { openFileBackend } from './files/open-backend.ts';
import { SignedFileUrls } from './files/url-signing.ts';
import { fileClassAccess, fileClassHandlers, registerFileRoutes } from './http/routes/files.ts';
import { registerFileServing } from './http/routes/file-serving.ts';
import { registerFileParts } from './http/routes/file-parts.ts';
import { UploadParts } from './files/upload-parts.ts';
import { collectRoutes, installSchemaValidation, type RouteEntry } from './http/schema.ts';
import { registerOpenApiRoutes } from './http/routes/openapi.ts';
import { version } from './lib/version.ts';
import { OperatorService } from './console/operators.ts';
import { Drain } from './http/drain.ts';
import { registerConsoleRoutes } from './http/routes/console.ts';
import { registerLeaderboardRoutes } from './http/routes/leaderboards.ts';
import { registerFriendshipRoutes } from './http/routes/friendships.ts';
import { registerStatusRoutes } from './http/routes/statuses.ts';
import { socialClassAccess, socialClassHandlers } from './http/server-written.ts';
import { Statuses } from './social/statuses.ts';
import { Friendships } from './social/friendships.ts';
import { Leaderboards } from './leaderboards/service.ts';

export interface ServerDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The phone-maker senders; by default the real ones (src/push/mixed-push.ts) with credentials from settings. */
  vendorDispatch?: VendorDispatch;
  /** Where mail goes; by default SMTP (SMTP_URL) or the outbox folder (OUTBOX_DIR). */
  mailer?: Mailer;
}

export interface Services {
  registry: AppRegistry;
  objects: ObjectService;
  /** Class schemas: field types, defaults, which fields are Relations (src/objects/schemas.ts). */
  schemas: ClassSchemas;
  accounts: AccountService;
  push: PushService;
  /** The console's operators (src/console/operators.ts). */
  operators: OperatorService;
  /** The overview's counts, flushed to shared buckets every few seconds (src/console/traffic.ts). */
  traffic: TrafficStats;
  /** Every route as registered, with its schema: what /openapi.json describes. */
  routes: readonly RouteEntry[];
}

/**
 * Every header an SDK sends from a browser: the JS SDK's X-LC-* (dist/av.js setHeaders), Roost's X-SVC-*,
 * and the X-AVOSCloud-* family of older SDKs and hand-written clients (LeanEngine allowed the same list).
 */
const allowedHeaders = [
  'Content-Type',
  'X-LC-Id',
  'X-LC-Key',
  'X-LC-Sign',
  'X-LC-Session',
  'X-LC-Prod',
  'X-LC-UA',
  'X-LC-Hook-Key',
  'X-SVC-Id',
  'X-SVC-Key',
  'X-SVC-Sign',
  'X-SVC-Session',
  'X-AVOSCloud-Application-Id',
  'X-AVOSCloud-Application-Key',
  'X-AVOSCloud-Application-Production',
  'X-AVOSCloud-Client-Version',
  'X-AVOSCloud-Master-Key',
  'X-AVOSCloud-Request-Sign',
  'X-AVOSCloud-Session-Token',
  'X-AVOSCloud-Super-Key',
  'X-Requested-With',
  // The SDKs' s3 uploader PUTs the bytes with it (src/http/routes/file-serving.ts).
  'Cache-Control',
];

/** Path segments after these are secrets (mail tokens, upload tokens) and never reach a log line. */
const secretPathSegment = /\/(resetPassword|verifyEmail|verifyMobilePhone|resetPasswordBySmsCode|verifySmsCode|files-upload|files-qiniu)\/[^/?]+/g;

export function safeUrl(url: string): string {
  return url.split('?')[0].replace(secretPathSegment, '/$1/<token>');
}

/** Largest request line and headers: a `where` in the URL counts, so $in lists of a few thousand ids fit. */
const maxHeaderBytes = 64 * 1024;

export async function buildServer(deps: ServerDeps): Promise<{ app: FastifyInstance; services: Services; drain: Drain }> {
  const { config, store, clock } = deps;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: config.bodyLimitBytes,
    // No connection stays open for nothing: a socket that sends no byte is closed after headersTimeout
    // (checked every second rather than Node's 30 s), a slow body after requestTimeout, an idle
    // keep-alive after keepAliveTimeout, a connection passing no byte either way after connectionTimeout.
    http: { headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: 1000, maxHeaderSize: maxHeaderBytes },
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: config.idleTimeoutMs,
    clientErrorHandler,
    // A request on a kept-alive connection while the node closes is answered, with Connection: close
    // (src/http/drain.ts), rather than refused with a 503 the proxy would hand to the client.
    return503OnClosing: false,
    // Forwarded headers count only from the proxies TRUST_PROXY names (loopback by default): from
    // anyone else they would let a client choose its own address, scheme and host.
    trustProxy: config.trustProxy,
    // A path segment may be as long as a request line: DELETE /1.1/classes/<C>/<id>,<id>,… names up to
    // 1,000 objects (classes.ts maxIdsPerDelete; inside /1.1/batch the path comes from the body). The
    // router's default, 100 characters, refused five ids.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: maxHeaderBytes },
    // The router's own refusals (a malformed URL, a path segment over 64 KiB) answer {code, error}
    // like every other error, and never echo the path: it may hold a mailed token.
    frameworkErrors: (error, _request, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const known = new ApiError('other', tooLong ? 'A path segment is too long.' : 'Malformed URL.');
      void (reply as FastifyReply).status(known.status).send(known.toBody());
    },
  });

  const registry = new AppRegistry({ store, clock, cacheMs: config.appCacheMs });
  const schemas = new ClassSchemas({
    store: store.schemas,
    now: () => clock.now(),
    cacheMs: config.appCacheMs,
    classExists: (appId, className) => store.classExists(appId, className),
  });
  const filesUrl = () => config.filesPublicUrl ?? config.publicUrl;
  const signedFiles =
    config.filesSignedUrlSeconds > 0
      ? new SignedFileUrls({ secret: config.secret, seconds: config.filesSignedUrlSeconds, now: () => clock.now(), base: filesUrl })
      : null;
  const objects = new ObjectService({
    store,
    clock,
    schemas,
    readRules: { [installationClass]: mayTouchInstallation },
    fileUrl: signedFiles ? (url) => signedFiles.sign(url) : undefined,
  });
  const mailer =
    deps.mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, outboxDir: config.outboxDir, logger: deps.logger });
  deps.logger.info({ mail: mailer.destination }, config.smtpUrl ? 'mail goes out over SMTP' : 'SMTP_URL is not set: mails are written to the outbox folder');
  const links = new MailLinks({
    tokens: store.mailTokens,
    clock,
    secret: config.secret,
    mailer,
    publicUrl: () => config.publicUrl,
    logger: deps.logger,
  });
  const verification = new EmailVerification({ store, clock, links, logger: deps.logger });
  // GET /metrics (src/http/routes/metrics.ts); the domain sees only src/lib/metrics.ts.
  const metrics = new PrometheusMetrics({ store, clock });
  // The console's overview charts count the same events, flushed to shared buckets (src/console/traffic.ts).
  const traffic = new TrafficStats({ store: store.stats, clock, onError: (error) => deps.logger.warn({ err: error }, 'writing the overview counts failed; they are kept for the next flush') });
  const reported = teeMetrics(metrics, traffic);
  const accounts = new AccountService({ store, clock, secret: config.secret, smsOutboxDir: config.smsOutboxDir, onEmailToVerify: verification.emailToVerify, metrics: reported, schemas });
  const reset = new PasswordReset({
    store,
    links,
    accounts,
    lockout: accounts.lockout,
    logger: deps.logger,
  });
  const resolveSession: SessionResolver = accounts.resolveSession;
  // Mixed push: the makers' senders read the app's settings at send time; receipts come back over HTTP.
  // Daily-quota pauses are shared by every node: on Redis when REDIS_URL is set, else in the database.
  const redisPauses = config.redisUrl ? connectQuotaPauses({ url: config.redisUrl, clock, logger: deps.logger }) : null;
  const pauses = redisPauses?.pauses ?? store.quotaPauses;
  const mixed = createMixedPush({ store, clock, logger: deps.logger, settingsFor: (appId) => registry.freshSettings(appId), pauses });
  const push = new PushService({
    store,
    clock,
    logger: deps.logger,
    objects,
    appKeys: async (appId) => {
      const app = await registry.get(appId);
      return app ? acceptedKeys(app, 'appKey', clock.now()) : null;
    },
    redisUrl: config.redisUrl,
    dispatch: deps.vendorDispatch ?? mixed.dispatch,
    pageSize: config.pushPageSize,
    leaseMs: config.pushLeaseMs,
    metrics: reported,
  });
  await push.ready();
  const installations = installationHandlers({ objects, installations: push.installations });
  const backend = await openFileBackend(config);
  const files = new FileService({
    objects,
    backend,
    app: (appId) => registry.get(appId),
    secret: config.secret,
    clock,
    maxBytes: config.fileMaxBytes,
    tokenTtlMs: config.fileTokenTtlMs,
    uploadUrl: (token) => `${filesUrl()}/files-upload/${token}`,
    partsUploadUrl: (token) => `${filesUrl()}/files-qiniu/${token}`,
  });
  // Beside the local backend's own .partial/ (no key starts with a dot); with S3, the same folder under the data folder.
  const uploadParts = new UploadParts(files, join(config.filesDir, '.parts'), config.fileTokenTtlMs, () => clock.now());
  // Parts left by uploads that expired while the server was down, or by a deleted application, go at start.
  await uploadParts.sweep().catch((error: unknown) => deps.logger.warn({ err: error }, 'expired upload parts could not be swept'));

  installErrorHandling(app);
  installSchemaValidation(app);
  const routes = collectRoutes(app);
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonParser);
  // CORS. Preflight (OPTIONS) is @fastify/cors's, in a context of its own; every other request gets the
  // two headers it would add, set here without its option merging per request (~2% of a get-by-id).
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', 'Location');
    done();
  });
  await app.register(async (preflight) => {
    // A preflight without Origin or Access-Control-Request-Method is refused as {code, error}, before
    // @fastify/cors would answer it in plain text.
    preflight.addHook('onRequest', (request, reply, done) => {
      if (request.method === 'OPTIONS' && (!request.headers.origin || !request.headers['access-control-request-method'])) {
        const refused = new ApiError('other', 'A preflight request needs Origin and Access-Control-Request-Method headers.');
        void reply.status(refused.status).send(refused.toBody());
        return;
      }
      done();
    });
    // methods: @fastify/cors allows only GET, HEAD and POST by default; the SDKs also PUT and DELETE.
    await preflight.register(cors, {
      origin: '*',
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders,
      exposedHeaders: ['Location'],
      maxAge: 86400,
    });
  });
  await app.register(compress, { global: true, threshold: 1024, encodings: ['gzip', 'deflate'] });

  // The one onResponse hook: the body turn, the log line, the Prometheus tally and the overview's count.
  // A callback hook, not an async one: no promise per request for a line that is mostly not written.
  app.addHook('onResponse', (request, reply, done) => {
    endBodyTurn(request);
    metrics.observe(request, reply);
    countAnswer(traffic, request, reply);
    // Nothing to build when info lines are not written (LOG_LEVEL=warn and above).
    if ((request.log as Partial<Logger>).isLevelEnabled?.('info') !== false) {
      request.log.info(
        {
          // The route pattern (not the URL) groups lines; app and code are absent where unknown.
          app: request.ctx?.appId,
          // The client's address: the socket's, or X-Forwarded-For's when it came from a trusted proxy.
          ip: request.ip,
          method: request.method,
          route: request.routeOptions.url ?? 'unmatched',
          url: safeUrl(request.url),
          status: reply.statusCode,
          code: request.answerCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      );
    }
    done();
  });

  registerOpenApiRoutes(app, { routes, version });
  // Ready answers 503 from the moment the node begins to drain or close, so a balancer polling it stops sending.
  const drain = new Drain(app.server);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  registerHealthRoutes(app, { store, version, checks: { redis: redisPauses?.ping, draining: () => drain.draining || closing } });
  // Outside the keyed scope, as the hosted service had it: a device whose clock is off reads this one to sign.
  registerDateRoute(app, { clock });
  registerMetricsRoutes(app, { metrics, token: config.metricsToken });
  traffic.start();
  app.addHook('onClose', async () => traffic.stop());
  await app.register(async (api) => {
    api.addHook('onRequest', authenticate({ registry, clock, resolveSession }));
    registerSettingsRoutes(api, { registry });
    registerIndexRoutes(api, { indexes: new ClassIndexes({ store: store.classIndexes }) });
    registerSchemaRoutes(api, { schemas });
    const generic = genericHandlers(objects);
    registerClassRoutes(api, { generic, builtIn: { _User: userClassHandlers(accounts, objects), _Installation: installations, _File: fileClassHandlers(objects, files), ...socialClassHandlers(generic), ...unsupportedClassHandlers() } });
    await registerFileRoutes(api, { files, objects });
    registerRoleRoutes(api, { handlers: generic });
    registerInstallationRoutes(api, { handlers: installations });
    registerPushRoutes(api, { push });
    registerUserRoutes(api, { accounts, objects });
    registerFriendshipRoutes(api, { friendships: new Friendships({ objects }), objects });
    registerStatusRoutes(api, { statuses: new Statuses({ objects, inboxes: store.statusInboxes }), objects });
    registerSmsRoutes(api, { accounts });
    registerEmailRoutes(api, { verification, reset });
    registerBatchRoutes(api);
    // Scan and CQL reach each class through the service its REST routes use (src/http/class-access.ts).
    const access = classAccess(objects, {
      _User: userClassAccess(accounts),
      _Installation: installationClassAccess({ objects, installations: push.installations }),
      _File: fileClassAccess(objects, files),
      ...socialClassAccess(objects),
      ...unsupportedClassAccess(),
    });
    registerScanRoutes(api, { secret: config.secret, access, objects });
    registerCloudQueryRoutes(api, { clock, access, objects });
    registerLeaderboardRoutes(api, { leaderboards: new Leaderboards({ store: store.leaderboards, clock }), access, objects });
    registerBatchSaveRoute(api);
  });

  await registerEmailPages(app, { verification, reset, registry });
  // The operators' web console (docs/console.md): its own accounts and sessions, the same services.
  const operators = new OperatorService({ store: store.operators, clock, secret: config.secret });
  const users = new UserAdmin({ accounts, store: store.accounts, reset });
  await registerConsoleRoutes(app, { operators, registry, clock, store, secret: config.secret, push, users, traffic });
  registerPushChannel(app, { channel: push.ownChannel, drain });
  // At the host root, without keys, as the Android SDK asks its RTM host (docs/push-connection.md).
  registerPushConnection(app, {
    protocol: push.lcConnection,
    appExists: async (appId) => (await registry.get(appId)) !== null,
    url: config.pushConnectionUrl,
    drain,
  });
  await registerFileParts(app, { files, parts: uploadParts });
  await registerFileServing(app, { files, local: backend instanceof LocalDiskBackend ? backend : null, signed: signedFiles });
  app.addHook('onClose', async () => files.backend.close?.());
  // Outside the X-LC scope: makers send no application keys.
  registerVendorCallbackRoutes(app, { onReceipt: async (batch) => void (await mixed.applyReceipts(batch)) });
  // Builds of declared indexes that a process stopped during (this one before a restart) start again.
  app.addHook('onReady', async () => void store.classIndexes.resume().catch((error) => app.log.error({ err: error }, 'resuming index builds')));
  app.addHook('onClose', async () => push.close());
  app.addHook('onClose', async () => redisPauses?.close());
  app.addHook('onClose', async () => mailer.close());

  return { app, services: { registry, objects, schemas, accounts, push, operators, traffic, routes }, drain };
}

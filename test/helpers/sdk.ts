import { after, before } from 'node:test';
import AV from 'leancloud-storage';
import { startServer, type StartOptions, type TestServer } from './harness.ts';

/** Points the official JavaScript SDK at a test server, keeping the server's own error messages. */
export function initSdk(server: { appId: string; appKey: string; url: string; masterKey?: string }): void {
  AV.init({ appId: server.appId, appKey: server.appKey, masterKey: server.masterKey, serverURL: server.url });
  // Without this the SDK appends " [400 POST …]" to every error message.
  (AV as unknown as { keepErrorRawMessage(on: boolean): void }).keepErrorRawMessage(true);
}

/** The error an SDK call fails with; the test fails if the call succeeds. */
export async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: number; message: string };
  }
  throw new Error('expected the SDK call to fail');
}

/**
 * A server for a file of SDK tests: started before them with the SDK pointed at it, stopped after them
 * with the SDK's user logged out. The getter answers the server once the tests run.
 */
export function sdkServer(options?: StartOptions): () => TestServer {
  let server: TestServer | undefined;
  before(async () => {
    server = await startServer(options);
    initSdk(server);
  });
  after(async () => {
    await AV.User.logOut();
    await server?.close();
  });
  return () => {
    if (!server) throw new Error('the SDK test server is not running');
    return server;
  };
}

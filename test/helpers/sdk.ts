import AV from 'leancloud-storage';

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

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A push device built on the npm `leancloud-realtime` SDK (code no one here wrote): it asks
 * `<server>/v1/route` where to connect, opens the WebSocket with its own subprotocol and protobuf
 * schema, and a ~20-line plugin makes it a push device: a login with appId + installationId, and an
 * ack of every `data` frame (as the Android SDK's push service does).
 */
export interface RealtimeDevice {
  readonly received: Array<{ id: string; data: Record<string, unknown> }>;
  /** The router's answer the SDK used and the subprotocol the socket agreed. */
  readonly route: { server: string; secondary: string; ttl: number };
  readonly protocol: string;
  close(): Promise<void>;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
}

/**
 * The SDK refuses a second Realtime for one appId in a process (module-level `initializedApp`), and
 * every simulated device is one: each gets its own copy of the SDK's core module.
 */
function freshSdk(): any {
  const path = require.resolve('leancloud-realtime/dist/core.js');
  delete require.cache[path];
  const sdk = require(path);
  const adapters = require('@leancloud/platform-adapters-node');
  sdk.setAdapters({ WebSocket: adapters.WebSocket, request: adapters.request });
  return sdk;
}

export async function realtimeDevice(options: { server: string; appId: string; appKey: string; installationId: string; ack?: boolean }): Promise<RealtimeDevice> {
  const sdk = freshSdk();
  const { GenericCommand, CommandType, AckCommand } = sdk.Protocals;
  const received: RealtimeDevice['received'] = [];
  let wake: () => void = () => {};
  let connection: any;
  const plugin = {
    name: 'roost-push-device',
    beforeCommandDispatch(command: any) {
      if (command.cmd !== CommandType.data) return true;
      const ids: string[] = command.dataMessage.ids;
      ids.forEach((id, k) => received.push({ id, data: JSON.parse(command.dataMessage.msg[k].data) }));
      if (options.ack !== false) {
        void connection.send(new GenericCommand({ cmd: CommandType.ack, installationId: options.installationId, ackMessage: new AckCommand({ ids }) }), false);
      }
      wake();
      return false;
    },
  };
  const realtime = new sdk.Realtime({ appId: options.appId, appKey: options.appKey, server: options.server, plugins: [plugin] });
  connection = await realtime._open();
  // The SDK waits for an answer with the login's serial number: a loggedin, or an error it throws.
  const loggedin = await connection.send(new GenericCommand({ cmd: CommandType.login, appId: options.appId, installationId: options.installationId }));
  if (loggedin.cmd !== CommandType.loggedin) throw new Error(`login answered with command ${loggedin.cmd}`);
  const route = realtime._cache.get('endpoints');
  return {
    received,
    route,
    protocol: connection._ws.protocol,
    async close() {
      realtime._close();
      await new Promise((resolve) => setTimeout(resolve, 50));
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`${options.installationId}: ${received.length} of ${count} pushes after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 50);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
  };
}

import { ChannelClient } from './client.ts';
import { LcClient } from '../connection/client.ts';

/** What the simulator needs of a device, on either protocol. */
interface SimulatedDevice {
  readonly received: Map<string, number>;
  readonly open: boolean;
  connect(): Promise<void>;
  close(): Promise<void>;
}

export interface SimulateOptions {
  url: string;
  appId: string;
  appKey: string;
  count: number;
  /** installationId of device i is `${prefix}${start + i}`. */
  prefix: string;
  start: number;
  /** Logins in flight at once. */
  concurrency: number;
  /** Roost's own channel (the default) or LeanCloud's push connection (docs/push-connection.md). */
  protocol?: 'own' | 'lc';
  /** One JSON object per line: connected, received (per message id, once all devices have it), stats. */
  emit: (event: Record<string, unknown>) => void;
}

/**
 * Connects `count` simulated devices to Roost's own push channel (or LeanCloud's push connection), each acknowledging what it
 * receives, and reports when every device has a given message (`roost devices simulate`).
 */
export async function simulateDevices(options: SimulateOptions): Promise<{ close(): Promise<void> }> {
  const devices: SimulatedDevice[] = [];
  const perMessage = new Map<string, number>();
  let received = 0;
  let duplicates = 0;
  const started = Date.now();
  const onPush = (frame: { id: string }, device: SimulatedDevice) => {
    received++;
    if ((device.received.get(frame.id) ?? 0) > 1) duplicates++;
    const n = (perMessage.get(frame.id) ?? 0) + 1;
    perMessage.set(frame.id, n);
    if (n === options.count) options.emit({ event: 'received', id: frame.id, devices: n, at: Date.now() });
  };
  for (let i = 0; i < options.count; i += options.concurrency) {
    const batch: SimulatedDevice[] = [];
    for (let j = i; j < Math.min(options.count, i + options.concurrency); j++) {
      const installationId = `${options.prefix}${options.start + j}`;
      const device: SimulatedDevice =
        options.protocol === 'lc'
          ? new LcClient({ url: options.url, appId: options.appId, installationId, onPush: (frame) => onPush(frame, device) })
          : new ChannelClient({ url: options.url, appId: options.appId, appKey: options.appKey, installationId, onPush: (frame) => onPush(frame, device) });
      batch.push(device);
    }
    await Promise.all(batch.map((d) => d.connect()));
    devices.push(...batch);
  }
  options.emit({ event: 'connected', devices: devices.length, ms: Date.now() - started, at: Date.now() });
  const timer = setInterval(() => {
    options.emit({ event: 'stats', open: devices.filter((d) => d.open).length, received, duplicates });
  }, 5000);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await Promise.all(devices.map((d) => d.close()));
    },
  };
}

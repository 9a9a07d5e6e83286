import { ChannelClient } from './client.ts';

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
  /** One JSON object per line: connected, received (per message id, once all devices have it), stats. */
  emit: (event: Record<string, unknown>) => void;
}

/**
 * Connects `count` simulated devices to Roost's own push channel, each acknowledging what it
 * receives, and reports when every device has a given message (`roost devices simulate`).
 */
export async function simulateDevices(options: SimulateOptions): Promise<{ close(): Promise<void> }> {
  const devices: ChannelClient[] = [];
  const perMessage = new Map<string, number>();
  let received = 0;
  let duplicates = 0;
  const started = Date.now();
  const onPush = (frame: { id: string }, device: ChannelClient) => {
    received++;
    if ((device.received.get(frame.id) ?? 0) > 1) duplicates++;
    const n = (perMessage.get(frame.id) ?? 0) + 1;
    perMessage.set(frame.id, n);
    if (n === options.count) options.emit({ event: 'received', id: frame.id, devices: n, at: Date.now() });
  };
  for (let i = 0; i < options.count; i += options.concurrency) {
    const batch: ChannelClient[] = [];
    for (let j = i; j < Math.min(options.count, i + options.concurrency); j++) {
      const device: ChannelClient = new ChannelClient({
        url: options.url,
        appId: options.appId,
        appKey: options.appKey,
        installationId: `${options.prefix}${options.start + j}`,
        onPush: (frame) => onPush(frame, device),
      });
      batch.push(device);
    }
    await Promise.all(batch.map((d) => d.connect()));
    devices.push(...batch);
  }
  options.emit({ event: 'connected', devices: devices.length, ms: Date.now() - started });
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

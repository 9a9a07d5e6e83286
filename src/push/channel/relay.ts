import type { Redis } from 'ioredis';
import { onFirstUse } from '../../lib/on-first-use.ts';
import type { Logger } from 'pino';
import type { ChannelBatch, ChannelHub } from './hub.ts';

const ioredis = onFirstUse<typeof import('ioredis')>('ioredis');

/** Carries own-channel batches to the node that holds each device. */
export interface Relay {
  publish(batch: ChannelBatch): Promise<void>;
  close(): Promise<void>;
}

/** One node: the batch goes straight to this node's hub. */
export class LocalRelay implements Relay {
  private readonly hub: ChannelHub;
  constructor(options: { hub: ChannelHub }) {
    this.hub = options.hub;
  }
  async publish(batch: ChannelBatch): Promise<void> {
    this.hub.deliver(batch);
  }
  async close(): Promise<void> {}
}

/**
 * Several nodes: every batch is published on one Redis channel and every node's hub delivers
 * it to the devices it holds (a page of up to a few thousand ids is one message, so the cost
 * is per page, not per device). The publishing node receives its own message like the others.
 */
export class RedisRelay implements Relay {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channel: string;
  private readonly ready: Promise<unknown>;

  constructor(options: { url: string; hub: ChannelHub; logger: Logger; channel?: string }) {
    this.channel = options.channel ?? 'roost:push:channel';
    // A publish fails after a few retries (the page is delivered again when its lease ends); the
    // subscription waits for Redis however long it is away and is renewed here on every connection,
    // not by ioredis, so that the hub learns when this node listens again.
    this.pub = new (ioredis().Redis)(options.url, { lazyConnect: false, maxRetriesPerRequest: 3 });
    this.sub = new (ioredis().Redis)(options.url, { lazyConnect: false, maxRetriesPerRequest: null, autoResubscribe: false });
    for (const client of [this.pub, this.sub]) {
      client.on('error', (error) => options.logger.warn({ err: error.message }, 'push relay: redis error'));
    }
    this.sub.on('messageBuffer', (_channel: Buffer, message: Buffer) => {
      let batch: ChannelBatch;
      try {
        batch = JSON.parse(message.toString('utf8')) as ChannelBatch;
      } catch {
        return;
      }
      options.hub.deliver(batch);
    });
    this.ready = new Promise<void>((resolve) => {
      let listenedBefore = false;
      this.sub.on('ready', () => {
        this.sub.subscribe(this.channel).then(
          () => {
            // What was published while this node did not listen is lost in Redis but waits in the mailboxes.
            if (listenedBefore) void options.hub.resendMailboxes();
            listenedBefore = true;
            resolve();
          },
          // The connection dropped again before the subscription: the next 'ready' subscribes.
          (error: Error) => options.logger.warn({ err: error.message }, 'push relay: subscribing failed'),
        );
      });
    });
  }

  /** Resolves once this node listens, so nothing published after start is missed. */
  whenReady(): Promise<unknown> {
    return this.ready;
  }

  async publish(batch: ChannelBatch): Promise<void> {
    await this.pub.publish(this.channel, JSON.stringify(batch));
  }

  async close(): Promise<void> {
    // QUIT waits for a connection that may never come back: with Redis away, stopping would hang.
    const end = (redis: Redis) => (redis.status === 'ready' ? redis.quit() : Promise.resolve(redis.disconnect()));
    await Promise.allSettled([end(this.sub), end(this.pub)]);
  }
}

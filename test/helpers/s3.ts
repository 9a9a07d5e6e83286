import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The environment that points a server's file backend at it (signed mode unless public is asked). */
  env(options?: { public?: boolean; prefix?: string }): Record<string, string>;
  close(): Promise<void>;
}

/** An S3-compatible server (s3rver, in this process) on a free port, with an empty bucket, in a folder of its own. */
export async function startS3(): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'roost-s3-'));
  const bucket = 'roost-files';
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    env: (options = {}) => ({
      FILES_BACKEND: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      ...(options.prefix ? { S3_PREFIX: options.prefix } : {}),
      ...(options.public ? { S3_PUBLIC_URL: `${endpoint}/${bucket}` } : {}),
    }),
    async close() {
      // Keep-alive sockets (fetch's, the AWS SDK's) would hold close() for their idle timeout.
      const closing = server.close();
      server.httpServer?.closeAllConnections();
      await closing;
      await rm(directory, { recursive: true, force: true });
    },
  };
}

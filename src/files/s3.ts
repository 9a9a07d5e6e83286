import type { Readable } from 'node:stream';
import { DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { checkKey, type ByteRange, type FileBackend, type StoredBytes } from './backend.ts';
import { measuring } from './local-disk.ts';
import { makeThumbnail, maxThumbnailsPerFile, thumbnailName, type ThumbnailRefusal, type ThumbnailSpec } from './thumbnails.ts';

export interface S3Options {
  bucket: string;
  /** Put before every key (`roost/`); empty: keys at the bucket's root. */
  prefix: string;
  region: string;
  /** An S3-compatible service's address (MinIO, R2, OSS…); unset: AWS. Addressed path-style. */
  endpoint: string | null;
  /** Unset: the AWS SDK's own chain (environment, profile, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  /**
   * Public mode: where the bucket's objects are read by anyone (the bucket's or a CDN's address), and file
   * URLs point there. Unset: signed mode, URLs point at Roost (`/files/<key>`), which answers each read with
   * a redirect to a URL signed for `signedUrlSeconds`, so the bucket stays private.
   */
  publicUrl: string | null;
  signedUrlSeconds: number;
}

const missing = (error: unknown) =>
  error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey' || error.name === 'NotFound');

/**
 * Any S3-compatible store. Uploads go through lib-storage's multipart Upload, which holds a few 5 MiB parts at a
 * time whatever the file's size and makes the object appear only when complete (a failed one is aborted).
 */
export class S3Backend implements FileBackend {
  readonly provider = 's3';
  readonly bucket: string;
  private readonly client: S3Client;

  constructor(
    private readonly options: S3Options,
    private readonly roostUrl: () => string,
  ) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // Checksums only where S3 requires them: the default sends streamed bodies aws-chunked with trailing
      // CRC32s, which many S3-compatible stores (s3rver, older MinIO, OSS) refuse. Integrity: the MD5 kept.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private objectKey(key: string): string {
    return this.options.prefix + checkKey(key);
  }

  async put(key: string, body: Readable, options: { contentType: string; maxBytes: number }): Promise<StoredBytes> {
    const meter = measuring(options.maxBytes);
    body.on('error', (error) => meter.destroy(error));
    body.pipe(meter);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.objectKey(key), Body: meter, ContentType: options.contentType },
      queueSize: 2,
      leavePartsOnError: false,
    });
    // A source that fails (too large, a dropped connection) ends the upload without completing it.
    const failed = new Promise<never>((_resolve, reject) => meter.once('error', reject));
    const done = upload.done();
    done.catch(() => undefined);
    try {
      await Promise.race([done, failed]);
    } catch (error) {
      await upload.abort().catch(() => undefined);
      throw error;
    }
    try {
      return { size: meter.counted, md5: await meter.md5() };
    } catch (error) {
      await this.delete(key);
      throw error;
    }
  }

  /** Where a key's thumbnails are kept: beside the keys, under `.thumbs/`, which no key can name (checkKey). */
  private thumbnailsOf(key: string): string {
    return `${this.options.prefix}.thumbs/${checkKey(key)}/`;
  }

  /** Lists the objects under a prefix a page (at most 1,000) at a time and deletes each page in one request. */
  private async deleteUnder(prefix: string): Promise<void> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      const keys = (page.Contents ?? []).flatMap((item) => (item.Key ? [{ Key: item.Key }] : []));
      if (keys.length > 0) await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async deleteApp(appId: string): Promise<void> {
    const folder = checkKey(`${appId}/x`).split('/')[0];
    await this.deleteUnder(`${this.options.prefix}${folder}/`);
    await this.deleteUnder(`${this.options.prefix}.thumbs/${folder}/`);
  }

  /**
   * A thumbnail is made on the first request (the original read from the bucket, resized here), kept in the bucket
   * under `.thumbs/<key>/`, and read from there as the file is: its public URL, or a URL signed for a short while.
   */
  async thumbnailUrl(key: string, spec: ThumbnailSpec): Promise<string | null | ThumbnailRefusal> {
    const folder = this.thumbnailsOf(key);
    const target = folder + thumbnailName(spec);
    if (!(await this.exists(target))) {
      const kept = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: folder, MaxKeys: maxThumbnailsPerFile }));
      if ((kept.KeyCount ?? 0) >= maxThumbnailsPerFile) return 'tooMany';
      const made = await makeThumbnail(() => this.get(key), spec);
      if (made === null || typeof made === 'string') return made;
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: target, Body: made, ContentType: `image/${spec.format}` }));
    }
    return this.readUrl(target);
  }

  private async exists(objectKey: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return true;
    } catch (error) {
      if (missing(error)) return false;
      throw error;
    }
  }

  /** Where a reader gets an object of the bucket: its public address, or a URL signed for signedUrlSeconds. */
  private async readUrl(objectKey: string): Promise<string> {
    if (this.options.publicUrl) return `${this.options.publicUrl}/${objectKey.split('/').map(encodeURIComponent).join('/')}`;
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: objectKey });
    return getSignedUrl(this.client, command, { expiresIn: this.options.signedUrlSeconds });
  }

  async head(key: string): Promise<{ size: number } | null> {
    try {
      const found = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { size: found.ContentLength ?? 0 };
    } catch (error) {
      if (missing(error)) return null;
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const found = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      return found.Body as Readable;
    } catch (error) {
      if (missing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    await this.deleteUnder(this.thumbnailsOf(key));
  }

  url(key: string): string {
    const path = this.objectKey(key).split('/').map(encodeURIComponent).join('/');
    if (this.options.publicUrl) return `${this.options.publicUrl}/${path}`;
    return `${this.roostUrl()}/files/${checkKey(key).split('/').map(encodeURIComponent).join('/')}`;
  }

  /** In signed mode, where a read of the key is sent: a URL of the bucket signed for a short while. */
  async signedUrl(key: string): Promise<string | null> {
    if (this.options.publicUrl) return null;
    return this.readUrl(this.objectKey(key));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

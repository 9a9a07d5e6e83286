import type Sharp from 'sharp';
import { onFirstUse } from '../lib/on-first-use.ts';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Turns } from '../lib/turns.ts';

const sharp = onFirstUse<typeof Sharp>('sharp');

/** A thumbnail as `AV.File#thumbnailURL` asks for it: qiniu's `imageView/<mode>/w/<w>/h/<h>/q/<q>/format/<fmt>`. */
export interface ThumbnailSpec {
  /** Mode 1: at least w×h, centred and cropped to it; mode 2: at most w×h, nothing cropped. */
  crop: boolean;
  width: number;
  height: number;
  quality: number;
  format: 'png' | 'jpeg' | 'webp' | 'gif';
}

const maxSide = 4096;
/** A thumbnail's own pixels: bounds what one holds in memory (a few bytes a pixel) whatever its sides. */
export const maxThumbnailPixels = 8_388_608;
/** Images past this many pixels are refused from their header, before anything is decoded. */
export const maxImagePixels = 50_000_000;
/** Different thumbnails kept of one file (apps ask for a handful of sizes; the URL is public). */
export const maxThumbnailsPerFile = 16;
/** Thumbnails made at once in this process: each keeps a core busy, the others wait their turn. */
const making = new Turns(2);
const pattern = /(?:^|[?&])imageView\/([12])\/w\/(\d{1,5})\/h\/(\d{1,5})(?:\/q\/(\d{1,3}))?(?:\/format\/(\w{1,8}))?$/;
const formats: Record<string, ThumbnailSpec['format']> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', webp: 'webp', gif: 'gif' };

/** The thumbnail a URL's query asks for; null when it asks for none, 'invalid' for one Roost cannot make. */
export function thumbnailSpec(query: string): ThumbnailSpec | null | 'invalid' {
  if (!query.includes('imageView/')) return null;
  const match = pattern.exec(query);
  if (!match) return 'invalid';
  const [, mode, w, h, q, fmt] = match;
  const width = Number(w);
  const height = Number(h);
  const quality = q === undefined ? 100 : Number(q);
  const format = formats[(fmt ?? 'png').toLowerCase()];
  if (!format || width < 1 || height < 1 || width > maxSide || height > maxSide || width * height > maxThumbnailPixels) return 'invalid';
  if (quality < 1 || quality > 100) return 'invalid';
  return { crop: mode === '1', width, height, quality, format };
}

/** The name a thumbnail is kept under beside its source's key. */
export function thumbnailName(spec: ThumbnailSpec): string {
  return `${spec.crop ? 'c' : 'f'}${spec.width}x${spec.height}q${spec.quality}.${spec.format}`;
}

/** Why a thumbnail was not made: no image in the bytes, an image past maxImagePixels, a file with every size it may have. */
export type ThumbnailRefusal = 'notImage' | 'tooLarge' | 'tooMany';

/**
 * The thumbnail's bytes, made of the bytes `open` gives (null: the file is gone), at most `making` at once.
 * sharp (libvips) reads the source as a stream; the result, at most maxThumbnailPixels, is gathered in memory.
 */
export async function makeThumbnail(open: () => Promise<Readable | null>, spec: ThumbnailSpec): Promise<Buffer | null | 'notImage' | 'tooLarge'> {
  return making.run(async () => {
    const source = await open();
    if (source === null) return null;
    let sourceFailure: Error | null = null;
    source.once('error', (error) => (sourceFailure = error));
    const resize = sharp()({ limitInputPixels: maxImagePixels })
      .rotate()
      .resize(spec.width, spec.height, { fit: spec.crop ? 'cover' : 'inside', withoutEnlargement: !spec.crop })
      .toFormat(spec.format, { quality: spec.quality });
    const chunks: Buffer[] = [];
    const gather = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        done();
      },
    });
    try {
      await pipeline(source, resize, gather);
    } catch (error) {
      // A source that failed (a disk or bucket error) is the server's trouble, not the file's.
      if (sourceFailure) throw sourceFailure;
      return /pixel limit/.test((error as Error).message) ? 'tooLarge' : 'notImage';
    }
    return Buffer.concat(chunks);
  });
}

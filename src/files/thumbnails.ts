import sharp, { type Sharp } from 'sharp';

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
  if (!format || width < 1 || height < 1 || width > maxSide || height > maxSide || quality < 1 || quality > 100) return 'invalid';
  return { crop: mode === '1', width, height, quality, format };
}

/** The name a thumbnail is kept under beside its source's key. */
export function thumbnailName(spec: ThumbnailSpec): string {
  return `${spec.crop ? 'c' : 'f'}${spec.width}x${spec.height}q${spec.quality}.${spec.format}`;
}

/** A stream that takes an image's bytes and gives the thumbnail's (sharp: libvips, a few MiB whatever the image). */
export function resizer(spec: ThumbnailSpec): Sharp {
  return sharp({ limitInputPixels: 50_000_000 })
    .rotate()
    .resize(spec.width, spec.height, { fit: spec.crop ? 'cover' : 'inside', withoutEnlargement: !spec.crop })
    .toFormat(spec.format, { quality: spec.quality });
}

import { crc32 } from 'node:zlib';
import { Deflate, Zip, ZipDeflate, type ZipInputFile } from 'fflate';

/**
 * A zip written member by member, each member's bytes pushed as chunks (fflate's streaming writer),
 * so an archive that unpacks to gigabytes is built without holding them: a member of zeros is the
 * same small chunk pushed again and again. A member given `deflated` is written from bytes
 * compressed once (`deflatedOnce`), so sixty-four identical bombs cost one deflate, not sixty-four.
 */
export type StreamedMember = { name: string; chunks: Iterable<Uint8Array> } | { name: string; deflated: DeflatedBytes };

/** A member's content deflated once: the compressed stream, the CRC-32 and the size of what it unpacks to. */
export interface DeflatedBytes {
  compressed: Uint8Array<ArrayBuffer>;
  crc: number;
  size: number;
}

export function deflatedOnce(chunks: Iterable<Uint8Array>): DeflatedBytes {
  const parts: Uint8Array[] = [];
  const deflate = new Deflate({ level: 1 }, (chunk) => parts.push(chunk));
  let crc = 0;
  let size = 0;
  for (const chunk of chunks) {
    crc = crc32(chunk, crc);
    size += chunk.length;
    deflate.push(chunk);
  }
  deflate.push(new Uint8Array(0), true);
  return { compressed: concatenated(parts), crc, size };
}

export function streamedZip(members: Iterable<StreamedMember>): Uint8Array {
  const parts: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    parts.push(chunk);
  });
  for (const member of members) {
    if ('deflated' in member) {
      const { compressed, crc, size } = member.deflated;
      // fflate's documented custom-member form: method 8 (deflate, APPNOTE 4.4.5), data handed on as is
      const file: ZipInputFile = { filename: member.name, size, crc, compression: 8 };
      zip.add(file);
      file.ondata!(null, compressed, true);
      continue;
    }
    const file = new ZipDeflate(member.name, { level: 1 });
    zip.add(file);
    for (const chunk of member.chunks) file.push(chunk);
    file.push(new Uint8Array(0), true);
  }
  zip.end();
  return concatenated(parts);
}

function concatenated(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `count` chunks of the same block: a member of `count * block.length` bytes. */
export function* repeated(block: Uint8Array, count: number): Generator<Uint8Array> {
  for (let i = 0; i < count; i++) yield block;
}

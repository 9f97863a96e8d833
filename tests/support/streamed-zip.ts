import { Zip, ZipDeflate } from 'fflate';

/**
 * A zip written member by member, each member's bytes pushed as chunks (fflate's streaming writer),
 * so an archive that unpacks to gigabytes is built without holding them: a member of zeros is the
 * same small chunk pushed again and again.
 */
export interface StreamedMember {
  name: string;
  chunks: Iterable<Uint8Array>;
}

export function streamedZip(members: Iterable<StreamedMember>): Uint8Array {
  const parts: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    parts.push(chunk);
  });
  for (const { name, chunks } of members) {
    const file = new ZipDeflate(name, { level: 1 });
    zip.add(file);
    for (const chunk of chunks) file.push(chunk);
    file.push(new Uint8Array(0), true);
  }
  zip.end();
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

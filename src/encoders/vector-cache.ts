/**
 * Append-only disk cache of vectors keyed by sha1(model name + text). One file per model; each record carries a
 * magic number and a checksum, so torn or interleaved writes (two processes appending, a crash mid-write) are
 * skipped when scanning instead of corrupting what follows. Records are only ever appended, one write() per batch
 * on an O_APPEND descriptor, so concurrent writers never overwrite each other.
 */
import { createHash } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";

const MAGIC = 0x31435655; // "UVC1" little-endian
const KEY_BYTES = 20;
const HEADER = 4 + KEY_BYTES;
const SCAN_CHUNK_RECORDS = 2048;

export interface VectorCache {
  readonly file: string;
  /** Distinct keys on disk, as of the last lookup. */
  readonly size: number;
  /** Looks keys up, first picking up records appended since the last lookup (by any process). */
  getMany(keys: Buffer[]): (Float32Array | undefined)[];
  /** Appends the records in one write. */
  putMany(entries: { key: Buffer; vector: Float32Array }[]): void;
  close(): void;
}

export function cacheKey(model: string, text: string): Buffer {
  return createHash("sha1").update(model).update("\0").update(text).digest();
}

/** FNV-1a style hash over the 32-bit words of key and vector. */
function checksum(buf: Buffer, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let p = from; p < to; p += 4) h = Math.imul(h ^ buf.readUInt32LE(p), 0x01000193);
  return h >>> 0;
}

export function openVectorCache(dir: string, model: string, dim: number): VectorCache {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${model.replace(/[^\w.@-]/g, "_")}-${dim}.vec`);
  const record = HEADER + dim * 4 + 4;
  const appendFd = openSync(file, "a");
  const readFd = openSync(file, "r");
  const offsets = new Map<string, number>();
  let scanned = 0;
  let closed = false;

  function refresh(): void {
    const size = fstatSync(readFd).size;
    const buf = Buffer.allocUnsafe(record * SCAN_CHUNK_RECORDS);
    while (size - scanned >= record) {
      const len = readSync(readFd, buf, 0, Math.min(buf.length, size - scanned), scanned);
      let p = 0;
      while (p + record <= len) {
        const end = p + record - 4;
        if (buf.readUInt32LE(p) === MAGIC && checksum(buf, p + 4, end) === buf.readUInt32LE(end)) {
          offsets.set(buf.toString("latin1", p + 4, p + HEADER), scanned + p);
          p += record;
        } else p++; // not a record start: resynchronise byte by byte
      }
      if (p === 0) break;
      scanned += p;
    }
  }

  return {
    file,
    get size() {
      return offsets.size;
    },
    getMany(keys) {
      if (closed) throw new Error("vector cache is closed");
      refresh();
      const bytes = Buffer.allocUnsafe(dim * 4);
      return keys.map((key) => {
        const at = offsets.get(key.toString("latin1"));
        if (at === undefined) return undefined;
        readSync(readFd, bytes, 0, bytes.length, at + HEADER);
        const v = new Float32Array(dim);
        for (let i = 0; i < dim; i++) v[i] = bytes.readFloatLE(i * 4);
        return v;
      });
    },
    putMany(entries) {
      if (closed) throw new Error("vector cache is closed");
      if (entries.length === 0) return;
      const buf = Buffer.alloc(record * entries.length);
      entries.forEach(({ key, vector }, r) => {
        if (key.length !== KEY_BYTES || vector.length !== dim)
          throw new Error("vector cache: bad key or vector size");
        const p = r * record;
        buf.writeUInt32LE(MAGIC, p);
        key.copy(buf, p + 4);
        for (let i = 0; i < dim; i++) buf.writeFloatLE(vector[i], p + HEADER + i * 4);
        buf.writeUInt32LE(checksum(buf, p + 4, p + record - 4), p + record - 4);
      });
      let written = 0;
      while (written < buf.length) written += writeSync(appendFd, buf, written);
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(appendFd);
      closeSync(readFd);
    },
  };
}

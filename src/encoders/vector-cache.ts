/**
 * Append-only disk cache of vectors keyed by sha1(model name + text). One file per model; each record carries a
 * magic number and a checksum, so torn or interleaved writes (two processes appending, a crash mid-write) are
 * skipped when scanning instead of corrupting what follows. Records are only ever appended, one write() per batch
 * on an O_APPEND descriptor, so concurrent writers never overwrite each other.
 *
 * Bounded: a file never grows past `maxBytes`. The writer that would pass it renames the file to `<file>.old` (the
 * previous generation) and starts a new one; a lookup that misses the current generation but hits the previous
 * one copies the record forward. So a vector survives a rotation when it was used since the one before: a
 * two-generation approximation of least-recently-used eviction. Memory per process is the key index of both
 * generations (about 60 bytes a record), so at most 2 × maxBytes / record size keys, whatever runs (a server
 * embedding every new claim would otherwise grow the file and the index without end).
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import { join, resolve } from "node:path";

const MAGIC = 0x31435655; // "UVC1" little-endian
const KEY_BYTES = 20;
const HEADER = 4 + KEY_BYTES;
const SCAN_CHUNK_RECORDS = 2048;
/** 256 MiB: about 129,000 USE-lite vectors, a few times what training and the default corpus need. */
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

export interface VectorCache {
  readonly file: string;
  /** Distinct keys of the current generation, as of the last lookup. */
  readonly size: number;
  /** Looks keys up, first picking up records appended since the last lookup (by any process). */
  getMany(keys: Buffer[]): (Float32Array | undefined)[];
  /** Appends the records in one write (rotating the file first when it would pass maxBytes). */
  putMany(entries: { key: Buffer; vector: Float32Array }[]): void;
  close(): void;
}

export interface VectorCacheOptions {
  /** Largest size of the file in bytes (default DEFAULT_MAX_BYTES); the previous generation takes as much again. */
  maxBytes?: number;
  /**
   * Share one open file and key index with the other caches of this file in this process (default true: the
   * retriever's and the verifier's encoders would otherwise each index the whole file).
   */
  shared?: boolean;
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

/** One generation: an open file and the offsets of the records scanned so far. */
interface Generation {
  readFd: number;
  ino: number;
  offsets: Map<string, number>;
  scanned: number;
}

interface Core extends Omit<VectorCache, "close"> {
  refs: number;
  release(): void;
}

const open = new Map<string, Core>();

export function openVectorCache(
  dir: string,
  model: string,
  dim: number,
  options: VectorCacheOptions = {},
): VectorCache {
  mkdirSync(dir, { recursive: true });
  const file = resolve(join(dir, `${model.replace(/[^\w.@-]/g, "_")}-${dim}.vec`));
  const shared = options.shared ?? true;
  let core = shared ? open.get(file) : undefined;
  if (core) core.refs++;
  else {
    core = openCore(file, dim, options.maxBytes ?? DEFAULT_MAX_BYTES, () => {
      if (open.get(file) === core) open.delete(file);
    });
    if (shared) open.set(file, core);
  }
  const c = core;
  let closed = false;
  const live = () => {
    if (closed) throw new Error("vector cache is closed");
  };
  return {
    file,
    get size() {
      return c.size;
    },
    getMany(keys) {
      live();
      return c.getMany(keys);
    },
    putMany(entries) {
      live();
      c.putMany(entries);
    },
    close() {
      if (closed) return;
      closed = true;
      c.release();
    },
  };
}

function openCore(file: string, dim: number, maxBytes: number, onClosed: () => void): Core {
  const record = HEADER + dim * 4 + 4;
  // A cap below one record would rotate on every write; keep at least one.
  const maxRecords = Math.max(1, Math.floor(maxBytes / record));
  let appendFd = -1;
  let current = generation(file, "a");
  let previous: Generation | undefined;
  // The previous generation of an earlier run (or of another process) still answers until the next rotation.
  if (statSync(`${file}.old`, { throwIfNoEntry: false })) {
    previous = generation(`${file}.old`, "r");
    scan(previous);
  }

  function generation(path: string, flags: "r" | "a"): Generation {
    if (flags === "a") {
      if (appendFd >= 0) closeSync(appendFd);
      appendFd = openSync(path, "a"); // creates it, so the read descriptor below opens the same file
    }
    const readFd = openSync(path, "r");
    return { readFd, ino: fstatSync(readFd).ino, offsets: new Map(), scanned: 0 };
  }

  /** The current file was renamed (by us or another process): it becomes the previous generation. */
  function shift(): void {
    if (previous) closeSync(previous.readFd);
    const old = statSync(`${file}.old`, { throwIfNoEntry: false });
    if (old?.ino === current.ino) {
      previous = current;
      scan(previous); // records other processes added before the rotation
    } else {
      // Others rotated more than once since we looked: theirs is the previous generation now.
      closeSync(current.readFd);
      previous = old ? generation(`${file}.old`, "r") : undefined;
      if (previous) scan(previous);
    }
    current = generation(file, "a");
  }

  function rotatedElsewhere(): boolean {
    const st = statSync(file, { throwIfNoEntry: false });
    return st === undefined || st.ino !== current.ino;
  }

  function scan(g: Generation): void {
    const size = fstatSync(g.readFd).size;
    const buf = Buffer.allocUnsafe(record * SCAN_CHUNK_RECORDS);
    while (size - g.scanned >= record) {
      const len = readSync(g.readFd, buf, 0, Math.min(buf.length, size - g.scanned), g.scanned);
      let p = 0;
      while (p + record <= len) {
        const end = p + record - 4;
        if (buf.readUInt32LE(p) === MAGIC && checksum(buf, p + 4, end) === buf.readUInt32LE(end)) {
          g.offsets.set(buf.toString("latin1", p + 4, p + HEADER), g.scanned + p);
          p += record;
        } else p++; // not a record start: resynchronise byte by byte
      }
      if (p === 0) break;
      g.scanned += p;
    }
  }

  const bytes = Buffer.allocUnsafe(record);
  /** The vector stored for a key in a generation, checked again on read (a record is never trusted blindly). */
  function read(g: Generation, key: string): Float32Array | undefined {
    const at = g.offsets.get(key);
    if (at === undefined) return undefined;
    const n = readSync(g.readFd, bytes, 0, record, at);
    const end = record - 4;
    if (
      n !== record ||
      bytes.readUInt32LE(0) !== MAGIC ||
      bytes.toString("latin1", 4, HEADER) !== key ||
      checksum(bytes, 4, end) !== bytes.readUInt32LE(end)
    ) {
      g.offsets.delete(key);
      return undefined;
    }
    const v = new Float32Array(dim);
    for (let i = 0; i < dim; i++) v[i] = bytes.readFloatLE(HEADER + i * 4);
    return v;
  }

  function append(entries: { key: Buffer; vector: Float32Array }[]): void {
    if (entries.length === 0) return;
    if (rotatedElsewhere()) shift();
    const size = fstatSync(appendFd).size;
    if (size + record * entries.length > maxBytes && size > 0) {
      // Rename, not truncate: readers elsewhere keep valid descriptors on the old file until they notice.
      try {
        renameSync(file, `${file}.old`);
      } catch {
        // another process rotated it first
      }
      shift();
    }
    const kept = entries.slice(-maxRecords);
    const buf = Buffer.alloc(record * kept.length);
    kept.forEach(({ key, vector }, r) => {
      const p = r * record;
      buf.writeUInt32LE(MAGIC, p);
      key.copy(buf, p + 4);
      for (let i = 0; i < dim; i++) buf.writeFloatLE(vector[i], p + HEADER + i * 4);
      buf.writeUInt32LE(checksum(buf, p + 4, p + record - 4), p + record - 4);
    });
    let written = 0;
    while (written < buf.length) written += writeSync(appendFd, buf, written);
  }

  let closed = false;
  const core: Core = {
    file,
    refs: 1,
    get size() {
      return current.offsets.size;
    },
    getMany(keys) {
      if (rotatedElsewhere()) shift();
      scan(current);
      const promote: { key: Buffer; vector: Float32Array }[] = [];
      const out = keys.map((key) => {
        const k = key.toString("latin1");
        const v = read(current, k);
        if (v || !previous) return v;
        const old = read(previous, k);
        if (old) promote.push({ key, vector: old });
        return old;
      });
      append(promote);
      return out;
    },
    putMany(entries) {
      for (const { key, vector } of entries)
        if (key.length !== KEY_BYTES || vector.length !== dim)
          throw new Error("vector cache: bad key or vector size");
      append(entries);
    },
    release() {
      if (closed || --core.refs > 0) return;
      closed = true;
      onClosed();
      closeSync(appendFd);
      closeSync(current.readFd);
      if (previous) closeSync(previous.readFd);
    },
  };
  return core;
}

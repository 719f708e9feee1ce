/**
 * Checksums of an index's files, recorded in the manifest when an ingest completes and checked when the index is
 * opened: a torn, truncated or overwritten file stops with a clear error instead of giving wrong results. CRC-32
 * (zlib's, several times faster than sha256 here) finds torn and truncated files; it is not a defence against
 * deliberate tampering.
 */
import { closeSync, fstatSync, fsyncSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { DataError } from "../data/errors.ts";

/** Bytes checked of one file (a prefix of an append-only file) and their CRC-32. */
export interface FileChecksum {
  bytes: number;
  crc32: number;
}

const CHUNK = 1 << 22;

/** CRC-32 of the first `bytes` bytes of a file (all of it when omitted), optionally fsync'ing it first. */
export function checksumFile(path: string, bytes?: number, sync = false): FileChecksum {
  const fd = openSync(path, "r");
  try {
    if (sync) fsyncSync(fd);
    const size = fstatSync(fd).size;
    const want = bytes ?? size;
    if (size < want) return { bytes: size, crc32: -1 };
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, want)));
    let crc = 0;
    for (let at = 0; at < want; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, want - at), at);
      if (n === 0) break;
      crc = crc32(buf.subarray(0, n), crc);
      at += n;
    }
    return { bytes: want, crc32: crc };
  } finally {
    closeSync(fd);
  }
}

/** Checksums of the named files of `dir`; `prefix` gives the bytes that count for append-only files. */
export function checksumFiles(
  dir: string,
  names: string[],
  prefix: Record<string, number> = {},
): Record<string, FileChecksum> {
  const out: Record<string, FileChecksum> = {};
  for (const name of [...names].sort()) out[name] = checksumFile(join(dir, name), prefix[name], true);
  return out;
}

/**
 * Throws a DataError naming the first file that is missing, shorter than recorded or not matching its checksum.
 * Append-only files (docs, vectors) may be longer than recorded: an ingest extending the index appends past it.
 */
export function verifyFiles(dir: string, files: Record<string, FileChecksum>, appendOnly: Set<string>): void {
  const fix = "delete the index folder and run the same `climatecheck ingest` again";
  for (const [name, want] of Object.entries(files)) {
    const path = join(dir, name);
    let size: number;
    try {
      const fd = openSync(path, "r");
      size = fstatSync(fd).size;
      closeSync(fd);
    } catch {
      throw new DataError(path, `index file is missing or unreadable; ${fix}`);
    }
    if (size < want.bytes || (size > want.bytes && !appendOnly.has(name)))
      throw new DataError(
        path,
        `index file is ${size} bytes, its manifest says ${want.bytes} (torn or truncated); ${fix}`,
      );
    if (checksumFile(path, want.bytes).crc32 !== want.crc32)
      throw new DataError(path, `index file does not match its checksum in the manifest (damaged); ${fix}`);
  }
}

import { closeSync, openSync, writeSync } from "node:fs";
import { crashPoint } from "./crash-points.ts";

/** Writes typed arrays back to back, without concatenating them in memory first. */
export function writeParts(path: string, parts: ArrayBufferView[]): void {
  const fd = openSync(path, "w");
  try {
    for (const p of parts) {
      const bytes = new Uint8Array(p.buffer, p.byteOffset, p.byteLength);
      for (let off = 0; off < bytes.length; )
        off += writeSync(fd, bytes, off, Math.min(1 << 28, bytes.length - off));
      crashPoint(`write: part of ${path.split(/[\\/]/).pop()}`);
    }
  } finally {
    closeSync(fd);
  }
}

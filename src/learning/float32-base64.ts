/** Float32 arrays in model JSON: base64 of their little-endian bytes (a quarter of the size of decimal text). */

export const float32ToBase64 = (a: Float32Array): string =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("base64");

/** Decodes float32ToBase64; with `expected`, a different count of values is an error naming `what`. */
export function float32FromBase64(s: string, expected?: { length: number; what: string }): Float32Array {
  const buf = Buffer.from(s, "base64");
  if (expected && buf.byteLength !== expected.length * 4)
    throw new Error(`${expected.what} has ${buf.byteLength / 4} values, want ${expected.length}`);
  const out = new Float32Array(buf.byteLength / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

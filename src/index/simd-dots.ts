/**
 * Dot products of one query with many consecutive rows, in WebAssembly SIMD (f32x4): about four times the
 * throughput of the JavaScript loop, which made IVF dense search the largest stage of a claim at 400k abstracts.
 * The module is a few dozen bytes, written out below instruction by instruction (no toolchain to ship). Sums are
 * kept in float32 (four lanes, then the lanes added), so scores may differ from the float64 JavaScript loop in
 * the seventh digit. The same module sums weighted rows (SIF sentence vectors) with the JavaScript loop's
 * roundings, so those sums are exact.
 */

/** The part of the WebAssembly API used here (the project's type libraries do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
declare const WebAssembly: {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
};

/** The kernel over one WebAssembly memory that holds the vectors, the query and the output. */
export interface SimdDots {
  readonly memory: WasmMemory;
  /** out[r] = query · row r, for `rows` rows of `dim` floats starting at byte `rowsAt`; all offsets in bytes. */
  dots(queryAt: number, rowsAt: number, rows: number, dim: number, outAt: number): void;
  /**
   * out[r] = (int16 query · int8 row r) × scales[r], for `rows` rows of `width` bytes (a multiple of 16) from byte
   * `codesAt`; a quarter of the memory traffic of `dots`, for scans where that is the limit (see quantizeRows).
   */
  dotsI8(
    queryAt: number,
    codesAt: number,
    scalesAt: number,
    rows: number,
    width: number,
    outAt: number,
  ): void;
  /**
   * acc[i] += w_k × row_k[i] for k < count, in token order, each step rounded to float32 as the JavaScript
   * `f32[i] += w * x` rounds it (float64 product and sum, then float32), so the sums are the same to the bit:
   * `rowsAt` holds the byte offset of each row (int32), `weightsAt` each weight (float64), `accAt` dim float64
   * sums (values a float32 holds; the caller zeroes them). dim even. For SIF sentence vectors (word-vectors.ts).
   */
  sums(rowsAt: number, weightsAt: number, count: number, dim: number, accAt: number): void;
}

const PAGE = 65536;
/** wasm32 memories stop at 4 GiB; larger vector sets keep the JavaScript loop. */
export const SIMD_MAX_BYTES = 65536 * PAGE;

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
const name = (s: string) => [s.length, ...[...s].map((c) => c.charCodeAt(0))];

// Parameters 0-4: query, rows, count, dim, out; locals 5 r, 6 j (byte offset in the row), 7 row pointer, 8 acc.
const [Q, ROWS, COUNT, DIM, OUT, R, J, P, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const i32 = (n: number) => [0x41, ...leb(n)];
const SIMD = 0xfd;
const v128Load = [SIMD, 0x00, 0x02, 0x00]; // align 4, offset 0
const f32x4Mul = [SIMD, 0xe6, 0x01];
const f32x4Add = [SIMD, 0xe4, 0x01];
const lane = (k: number) => [...get(ACC), SIMD, 0x1f, k];
const rowBytes = [...get(DIM), ...i32(2), 0x74]; // dim << 2
/** The end of a loop over rows: next row (local `i` + 1), back to the loop's start; closes loop, block, body. */
const nextRow = (i: number) => [...get(i), ...i32(1), 0x6a, ...set(i), ...[0x0c, 0], 0x0b, 0x0b, 0x0b];
/** base + 4 x index (an i32 address). */
const at4 = (base: number, index: number) => [...get(base), ...get(index), ...i32(2), 0x74, 0x6a];
/** ((lane 0 + lane 1) + lane 2) + lane 3, with `add` the add instruction of the lane type. */
const sumLanes = (lane: (k: number) => number[], add: number) => [
  ...lane(0),
  ...lane(1),
  add,
  ...lane(2),
  add,
  ...lane(3),
  add,
];

const body = [
  ...[0x02, 0x03, 0x7f, 0x01, 0x7b], // locals: 3 x i32, 1 x v128
  ...get(ROWS),
  ...set(P),
  ...[0x02, 0x40], // block
  ...[0x03, 0x40], // loop over rows
  ...get(R),
  ...get(COUNT),
  0x4f, // i32.ge_u
  ...[0x0d, 1], // br_if out of the block
  ...[SIMD, 0x0c, ...new Array(16).fill(0)], // v128.const 0
  ...set(ACC),
  ...i32(0),
  ...set(J),
  ...[0x03, 0x40], // loop over the row, 4 floats at a time
  ...get(ACC),
  ...get(Q),
  ...get(J),
  0x6a,
  ...v128Load,
  ...get(P),
  ...get(J),
  0x6a,
  ...v128Load,
  ...f32x4Mul,
  ...f32x4Add,
  ...set(ACC),
  ...get(J),
  ...i32(16),
  0x6a,
  ...[0x22, J], // local.tee j
  ...rowBytes,
  0x49, // i32.lt_u
  ...[0x0d, 0], // br_if: next 4 floats
  0x0b,
  // out[r] = ((lane0 + lane1) + lane2) + lane3
  ...at4(OUT, R),
  ...sumLanes(lane, 0x92),
  ...[0x38, 0x02, 0x00], // f32.store
  ...get(P),
  ...rowBytes,
  0x6a,
  ...set(P),
  ...nextRow(R),
];

// dotsI8: parameters 0-5 query (int16), codes (int8 rows), scales (float32 per row), count, width (bytes a row, a
// multiple of 16), out; locals 6 r, 7 j, 8 row pointer, 9 query pointer, 10 acc (int32 x 4), 11 codes.
const [QI, CODES, SCALES, COUNT_I, WIDTH, OUT_I, RI, JI, PI, QP, ACCI, CI] = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
];
const laneI = (k: number) => [...get(ACCI), SIMD, 0x1b, k];
const bodyI8 = [
  ...[0x02, 0x04, 0x7f, 0x02, 0x7b], // locals: 4 x i32, 2 x v128
  ...get(CODES),
  ...set(PI),
  ...[0x02, 0x40],
  ...[0x03, 0x40],
  ...get(RI),
  ...get(COUNT_I),
  0x4f,
  ...[0x0d, 1],
  ...[SIMD, 0x0c, ...new Array(16).fill(0)],
  ...set(ACCI),
  ...i32(0),
  ...set(JI),
  ...[0x03, 0x40], // 16 elements at a time: int16 query lanes times int8 codes widened to int16, pairs summed
  ...get(PI),
  ...get(JI),
  0x6a,
  ...[SIMD, 0x00, 0x00, 0x00], // v128.load: 16 codes
  ...set(CI),
  ...get(ACCI),
  ...get(QI),
  ...get(JI),
  ...i32(1),
  0x74,
  0x6a,
  ...[0x22, QP], // local.tee: address of the 16 query values
  ...[SIMD, 0x00, 0x01, 0x00], // v128.load: query values 0-7
  ...get(CI),
  ...[SIMD, 0x87, 0x01], // i16x8.extend_low_i8x16_s: codes 0-7
  ...[SIMD, 0xba, 0x01], // i32x4.dot_i16x8_s
  ...[SIMD, 0xae, 0x01], // i32x4.add
  ...get(QP),
  ...[SIMD, 0x00, 0x01, 0x10], // v128.load offset 16: query values 8-15
  ...get(CI),
  ...[SIMD, 0x88, 0x01], // i16x8.extend_high_i8x16_s: codes 8-15
  ...[SIMD, 0xba, 0x01],
  ...[SIMD, 0xae, 0x01],
  ...set(ACCI),
  ...get(JI),
  ...i32(16),
  0x6a,
  ...[0x22, JI],
  ...get(WIDTH),
  0x49,
  ...[0x0d, 0],
  0x0b,
  // out[r] = float(sum of lanes) * scales[r]
  ...at4(OUT_I, RI),
  ...sumLanes(laneI, 0x6a),
  0xb2, // f32.convert_i32_s
  ...at4(SCALES, RI),
  ...[0x2a, 0x02, 0x00], // f32.load
  0x94, // f32.mul
  ...[0x38, 0x02, 0x00],
  ...get(PI),
  ...get(WIDTH),
  0x6a,
  ...set(PI),
  ...nextRow(RI),
];

// sums: parameters 0-4 rows (int32 byte offsets), weights (float64), count, dim, acc (float64 x dim); locals 5 k,
// 6 j (byte offset in acc; the row's is half of it), 7 row pointer, 8 w (the weight in both float64 lanes).
const [ROWS_S, WEIGHTS_S, COUNT_S, DIM_S, ACC_S, K_S, J_S, P_S, W_S] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
const bodySums = [
  ...[0x02, 0x03, 0x7f, 0x01, 0x7b], // locals: 3 x i32, 1 x v128
  ...[0x02, 0x40], // block
  ...[0x03, 0x40], // loop over the rows
  ...get(K_S),
  ...get(COUNT_S),
  0x4f, // i32.ge_u
  ...[0x0d, 1],
  ...at4(ROWS_S, K_S),
  ...[0x28, 0x02, 0x00], // i32.load
  ...set(P_S),
  ...get(WEIGHTS_S),
  ...get(K_S),
  ...i32(3),
  0x74,
  0x6a,
  ...[0x2b, 0x03, 0x00], // f64.load
  ...[SIMD, 0x14], // f64x2.splat
  ...set(W_S),
  ...i32(0),
  ...set(J_S),
  ...[0x03, 0x40], // loop over the row, 2 floats at a time
  ...get(ACC_S),
  ...get(J_S),
  0x6a, // the store's address
  ...get(ACC_S),
  ...get(J_S),
  0x6a,
  ...[SIMD, 0x00, 0x03, 0x00], // v128.load: two float64 sums
  ...get(W_S),
  ...get(P_S),
  ...get(J_S),
  ...i32(1),
  0x76, // i32.shr_u
  0x6a,
  ...[SIMD, 0x5d, 0x02, 0x00], // v128.load64_zero: two float32 of the row
  ...[SIMD, 0x5f], // f64x2.promote_low_f32x4
  ...[SIMD, 0xf2, 0x01], // f64x2.mul
  ...[SIMD, 0xf0, 0x01], // f64x2.add
  ...[SIMD, 0x5e], // f32x4.demote_f64x2_zero: rounded to float32 ...
  ...[SIMD, 0x5f], // ... and back (exact)
  ...[SIMD, 0x0b, 0x03, 0x00], // v128.store
  ...get(J_S),
  ...i32(16),
  0x6a,
  ...[0x22, J_S],
  ...get(DIM_S),
  ...i32(3),
  0x74,
  0x49, // i32.lt_u
  ...[0x0d, 0],
  0x0b,
  ...nextRow(K_S),
];

const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(
    1,
    [2, 0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0, 0x60, 6, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0],
  ),
  ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 0x01]),
  ...section(3, [3, 0, 1, 0]),
  ...section(7, [3, ...name("dots"), 0x00, 0, ...name("dotsI8"), 0x00, 1, ...name("sums"), 0x00, 2]),
  ...section(10, [
    3,
    ...leb(body.length),
    ...body,
    ...leb(bodyI8.length),
    ...bodyI8,
    ...leb(bodySums.length),
    ...bodySums,
  ]),
]);

let compiled: object | null | undefined;

/** The compiled module, or null where this runtime has no WebAssembly SIMD. */
function module(): object | null {
  if (compiled === undefined) compiled = WebAssembly.validate(MODULE) ? new WebAssembly.Module(MODULE) : null;
  return compiled;
}

/**
 * A kernel over a fresh memory of at least `bytes` bytes, or null without SIMD, for rows whose width is not a
 * multiple of 4 floats, or above SIMD_MAX_BYTES; the caller then keeps the JavaScript loop.
 */
export function simdDots(bytes: number, dim: number): SimdDots | null {
  const m = module();
  if (!m || dim % 4 !== 0 || bytes > SIMD_MAX_BYTES) return null;
  const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
  const instance = new WebAssembly.Instance(m, { env: { memory } });
  const dots = instance.exports.dots as SimdDots["dots"];
  const dotsI8 = instance.exports.dotsI8 as SimdDots["dotsI8"];
  const sums = instance.exports.sums as SimdDots["sums"];
  return { memory, dots, dotsI8, sums };
}

/** Row width in bytes of int8 codes for `dim` floats: padded with zeros to a multiple of 16 (one load). */
export const codeWidth = (dim: number): number => Math.ceil(dim / 16) * 16;

/** Largest int16 query value: 127 x QUERY_MAX x (width / 4) pairs a lane stays inside int32 up to 8,192 floats. */
const QUERY_MAX = 8191;

/** Each row as int8 codes (symmetric, its own scale = max |x| / 127) into `codes`, its scale into `scales`. */
export function quantizeRows(
  data: Float32Array,
  rows: number,
  dim: number,
  codes: Int8Array,
  scales: Float32Array,
): void {
  const width = codeWidth(dim);
  for (let r = 0; r < rows; r++) {
    let m = 0;
    for (let j = 0; j < dim; j++) m = Math.max(m, Math.abs(data[r * dim + j]));
    const k = m > 0 ? 127 / m : 0;
    for (let j = 0; j < dim; j++) codes[r * width + j] = Math.round(data[r * dim + j] * k);
    scales[r] = m / 127;
  }
}

/** The query as int16 into `into` (width wide, zero padded); returns the factor that turns dotsI8 output into dots. */
export function quantizeQuery(query: Float32Array, into: Int16Array): number {
  let m = 0;
  for (let j = 0; j < query.length; j++) m = Math.max(m, Math.abs(query[j]));
  const k = m > 0 ? QUERY_MAX / m : 0;
  into.fill(0);
  for (let j = 0; j < query.length; j++) into[j] = Math.round(query[j] * k);
  return m / QUERY_MAX;
}

/**
 * Faster TF.js WebAssembly kernels for the two ops where USE-lite loses most time outside its dense layers
 * (profiled: 15-20% in SplitV, 15-25% in attention matmuls on abstracts). Same results, registered over the
 * bundled ones for this thread's TF.js:
 * - SplitV: the bundled one copies the whole input out of the WebAssembly heap once per output, then slices in
 *   JS; ours copies each slice straight between heap views.
 * - BatchMatMul with a batch (attention: one product per text and head): the bundled kernel runs those with a
 *   naive loop (~1.9 GFLOP/s here); ours runs each product through the kernel's XNNPACK path for a single weight
 *   matrix (~5 GFLOP/s measured), transposing operands while copying them in.
 */
import core from "@energetic-ai/core";

type Shape = number[];
interface TensorInfo {
  dataId: object;
  shape: Shape;
  dtype: string;
}
interface WasmBackend {
  makeOutput(shape: Shape, dtype: string): TensorInfo;
  typedArrayFromHeap(t: TensorInfo): Float32Array | Int32Array;
  disposeData(dataId: object): boolean;
}
interface KernelArgs {
  inputs: Record<string, TensorInfo>;
  attrs: Record<string, unknown>;
  backend: WasmBackend;
}
type KernelFunc = (args: KernelArgs) => TensorInfo | TensorInfo[];
interface KernelConfig {
  kernelName: string;
  backendName: string;
  kernelFunc: KernelFunc;
  setupFunc?: (backend: unknown) => void;
}
interface TfKernels {
  getKernel(name: string, backend: string): KernelConfig | undefined;
  registerKernel(config: KernelConfig): void;
  unregisterKernel(name: string, backend: string): void;
  util: { parseAxisParam(axis: unknown, shape: Shape): number[] };
  backend_util: { prepareSplitSize(x: TensorInfo, sizes: unknown, axis: number): number[] };
}
const tf = core as unknown as TfKernels;

const size = (shape: Shape, from = 0, to = shape.length) => {
  let n = 1;
  for (let i = from; i < to; i++) n *= shape[i];
  return n;
};

function fastSplitV(fallback: KernelFunc): KernelFunc {
  return (args) => {
    const { x } = args.inputs;
    if (x.dtype !== "float32" && x.dtype !== "int32") return fallback(args);
    const { backend } = args;
    const axis = tf.util.parseAxisParam(args.attrs.axis, x.shape)[0];
    const sizes = tf.backend_util.prepareSplitSize(x, args.attrs.numOrSizeSplits, axis);
    const outer = size(x.shape, 0, axis);
    const inner = size(x.shape, axis + 1);
    const along = x.shape[axis];
    const outs = sizes.map((s) =>
      backend.makeOutput(
        x.shape.map((d, i) => (i === axis ? s : d)),
        x.dtype,
      ),
    );
    // Views only after every allocation: growing the heap detaches earlier views.
    const xs = backend.typedArrayFromHeap(x);
    let begin = 0;
    outs.forEach((out, n) => {
      const chunk = sizes[n] * inner;
      const o = backend.typedArrayFromHeap(out);
      for (let r = 0; r < outer; r++) {
        const from = (r * along + begin) * inner;
        o.set(xs.subarray(from, from + chunk), r * chunk);
      }
      begin += sizes[n];
    });
    return outs;
  };
}

/** Copies a rows×cols matrix from src[at..] into dst, transposed if asked (dst is then cols×rows). */
function copyMatrix(
  src: Float32Array,
  at: number,
  rows: number,
  cols: number,
  transpose: boolean,
  dst: Float32Array,
) {
  if (!transpose) {
    dst.set(src.subarray(at, at + rows * cols));
    return;
  }
  for (let r = 0; r < rows; r++) {
    const base = at + r * cols;
    for (let c = 0; c < cols; c++) dst[c * rows + r] = src[base + c];
  }
}

function fastBatchMatMul(fallback: KernelFunc): KernelFunc {
  const heap = (backend: WasmBackend, t: TensorInfo) => backend.typedArrayFromHeap(t) as Float32Array;
  return (args) => {
    const { a, b } = args.inputs;
    const transposeA = args.attrs.transposeA === true;
    const transposeB = args.attrs.transposeB === true;
    const ra = a.shape.length;
    const rb = b.shape.length;
    const batch = size(a.shape, 0, ra - 2);
    const sameBatch = ra === rb && a.shape.slice(0, -2).every((d, i) => d === b.shape[i]);
    // Rank-2 products already take the XNNPACK path; broadcasting batches and other dtypes keep the bundled code.
    if (batch <= 1 || !sameBatch || a.dtype !== "float32" || b.dtype !== "float32") return fallback(args);
    const { backend } = args;
    const [aRows, aCols] = a.shape.slice(-2);
    const [bRows, bCols] = b.shape.slice(-2);
    const m = transposeA ? aCols : aRows;
    const k = transposeA ? aRows : aCols;
    const n = transposeB ? bRows : bCols;
    const out = backend.makeOutput([...a.shape.slice(0, -2), m, n], "float32");
    const ai = backend.makeOutput([m, k], "float32");
    for (let i = 0; i < batch; i++) {
      // A new right operand each time: XNNPACK caches its packed weights by tensor id.
      const bi = backend.makeOutput([k, n], "float32");
      copyMatrix(heap(backend, a), i * aRows * aCols, aRows, aCols, transposeA, heap(backend, ai));
      copyMatrix(heap(backend, b), i * bRows * bCols, bRows, bCols, transposeB, heap(backend, bi));
      const oi = fallback({
        inputs: { a: ai, b: bi },
        attrs: { transposeA: false, transposeB: false },
        backend,
      });
      const single = Array.isArray(oi) ? oi[0] : oi;
      heap(backend, out).set(heap(backend, single).subarray(0, m * n), i * m * n);
      backend.disposeData(single.dataId);
      backend.disposeData(bi.dataId);
    }
    backend.disposeData(ai.dataId);
    return out;
  };
}

let installed = false;

/** Registers the faster kernels over the bundled WebAssembly ones (once per thread). */
export function installFastWasmKernels(): void {
  if (installed) return;
  for (const [name, make] of [
    ["SplitV", fastSplitV],
    ["BatchMatMul", fastBatchMatMul],
  ] as const) {
    const original = tf.getKernel(name, "wasm");
    if (!original) throw new Error(`TF.js WebAssembly kernel ${name} not found`);
    tf.unregisterKernel(name, "wasm");
    tf.registerKernel({ ...original, kernelFunc: make(original.kernelFunc) });
  }
  installed = true;
}

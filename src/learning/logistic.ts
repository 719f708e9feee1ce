/**
 * Logistic regression, binary (sigmoid) or multinomial (softmax), on dense or sparse features, with L2
 * regularisation, class and sample weights, trained by full-batch L-BFGS (deterministic: same data, same model).
 */
import { float32FromBase64, float32ToBase64 } from "./float32-base64.ts";
import { minimise } from "./lbfgs.ts";
import type { SparseVector } from "./sparse.ts";

export type Features = Float32Array | SparseVector;

export interface LogisticOptions {
  /** "binary": labels 0/1, one weight vector. "multinomial": labels 0..classes-1, softmax. */
  kind: "binary" | "multinomial";
  /** Number of classes (2 for binary). */
  classes: number;
  /** Strength of the L2 penalty (lambda / 2 * ||w||^2 added to the weighted mean log loss; bias not penalised). */
  l2: number;
  /** "balanced" = n / (classes * count(class)), or one weight per class. */
  classWeight?: "balanced" | readonly number[];
  /** One weight per example, multiplied with its class weight. */
  sampleWeights?: readonly number[];
  maxIter?: number;
  gradTolerance?: number;
}

export interface LogisticJson {
  kind: "binary" | "multinomial";
  classes: number;
  dim: number;
  /** Feature-major weights (dim x outputs) as base64 little-endian float32. */
  weights: string;
  bias: number[];
}

function forEachFeature(x: Features, fn: (index: number, value: number) => void): void {
  if (x instanceof Float32Array) {
    for (let j = 0; j < x.length; j++) if (x[j] !== 0) fn(j, x[j]);
  } else {
    for (let k = 0; k < x.indices.length; k++) fn(x.indices[k], x.values[k]);
  }
}

function softmaxInPlace(z: Float32Array | Float64Array): void {
  let m = Number.NEGATIVE_INFINITY;
  for (const v of z) m = Math.max(m, v);
  let s = 0;
  for (let k = 0; k < z.length; k++) {
    z[k] = Math.exp(z[k] - m);
    s += z[k];
  }
  for (let k = 0; k < z.length; k++) z[k] /= s;
}

export const sigmoid = (z: number): number =>
  z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));

export class LogisticModel {
  readonly kind: "binary" | "multinomial";
  readonly classes: number;
  readonly dim: number;
  /** Outputs per feature: 1 for binary, `classes` for multinomial. */
  readonly outputs: number;
  readonly weights: Float32Array;
  readonly bias: Float32Array;

  constructor(
    kind: "binary" | "multinomial",
    classes: number,
    dim: number,
    weights: Float32Array,
    bias: Float32Array,
  ) {
    const outputs = kind === "binary" ? 1 : classes;
    if (kind === "binary" && classes !== 2) throw new Error("binary logistic regression has 2 classes");
    if (weights.length !== dim * outputs || bias.length !== outputs)
      throw new Error("logistic: weight shape does not match dim x outputs");
    this.kind = kind;
    this.classes = classes;
    this.dim = dim;
    this.outputs = outputs;
    this.weights = weights;
    this.bias = bias;
  }

  /** Raw scores (logits): one for binary, one per class for multinomial. */
  decision(x: Features): Float32Array {
    const K = this.outputs;
    const z = Float32Array.from(this.bias);
    const w = this.weights;
    forEachFeature(x, (j, v) => {
      if (j >= this.dim) return;
      const base = j * K;
      for (let k = 0; k < K; k++) z[k] += v * w[base + k];
    });
    return z;
  }

  /** Class probabilities (sum to 1); binary gives [P(0), P(1)]. */
  predictProba(x: Features): Float32Array {
    const z = this.decision(x);
    if (this.kind === "binary") {
      const p = sigmoid(z[0]);
      return Float32Array.of(1 - p, p);
    }
    softmaxInPlace(z);
    return z;
  }

  toJSON(): LogisticJson {
    return {
      kind: this.kind,
      classes: this.classes,
      dim: this.dim,
      weights: float32ToBase64(this.weights),
      bias: Array.from(this.bias),
    };
  }

  static fromJSON(json: LogisticJson): LogisticModel {
    const weights = float32FromBase64(json.weights);
    return new LogisticModel(json.kind, json.classes, json.dim, weights, Float32Array.from(json.bias));
  }
}

/** Per-example weights = class weight x sample weight. */
function exampleWeights(y: readonly number[], options: LogisticOptions): Float64Array {
  const n = y.length;
  const counts = new Array(options.classes).fill(0);
  for (const c of y) counts[c]++;
  const cw =
    options.classWeight === "balanced"
      ? counts.map((c) => (c > 0 ? n / (options.classes * c) : 0))
      : (options.classWeight ?? counts.map(() => 1));
  if (cw.length !== options.classes) throw new Error("classWeight needs one weight per class");
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = cw[y[i]] * (options.sampleWeights ? options.sampleWeights[i] : 1);
  return out;
}

export function trainLogistic(
  x: readonly Features[],
  y: readonly number[],
  dim: number,
  options: LogisticOptions,
): LogisticModel {
  if (x.length !== y.length) throw new Error("trainLogistic: x and y lengths differ");
  if (x.length === 0) throw new Error("trainLogistic: no examples");
  if (options.sampleWeights && options.sampleWeights.length !== y.length)
    throw new Error("trainLogistic: one sample weight per example");
  for (const c of y) {
    if (!Number.isInteger(c) || c < 0 || c >= options.classes)
      throw new Error(`trainLogistic: bad label ${c}`);
  }
  const binary = options.kind === "binary";
  const K = binary ? 1 : options.classes;
  const nW = dim * K;
  const weights = exampleWeights(y, options);
  let total = 0;
  for (const w of weights) total += w;
  if (total <= 0) throw new Error("trainLogistic: all example weights are zero");
  // Parameters: [weights (feature-major, dim x K), bias (K)].
  const z = new Float64Array(K);
  const objective = (theta: Float64Array, grad: Float64Array): number => {
    grad.fill(0);
    let loss = 0;
    for (let i = 0; i < x.length; i++) {
      const wi = weights[i];
      if (wi === 0) continue;
      for (let k = 0; k < K; k++) z[k] = theta[nW + k];
      forEachFeature(x[i], (j, v) => {
        const base = j * K;
        for (let k = 0; k < K; k++) z[k] += v * theta[base + k];
      });
      if (binary) {
        const p = sigmoid(z[0]);
        const t = y[i];
        loss -= wi * (t === 1 ? Math.log(Math.max(p, 1e-15)) : Math.log(Math.max(1 - p, 1e-15)));
        z[0] = wi * (p - t);
      } else {
        softmaxInPlace(z);
        loss -= wi * Math.log(Math.max(z[y[i]], 1e-15));
        for (let k = 0; k < K; k++) z[k] = wi * (z[k] - (k === y[i] ? 1 : 0));
      }
      forEachFeature(x[i], (j, v) => {
        const base = j * K;
        for (let k = 0; k < K; k++) grad[base + k] += v * z[k];
      });
      for (let k = 0; k < K; k++) grad[nW + k] += z[k];
    }
    loss /= total;
    for (let p = 0; p < grad.length; p++) grad[p] /= total;
    let reg = 0;
    for (let p = 0; p < nW; p++) {
      reg += theta[p] * theta[p];
      grad[p] += options.l2 * theta[p];
    }
    return loss + 0.5 * options.l2 * reg;
  };
  const { x: theta } = minimise(objective, new Float64Array(nW + K), {
    maxIter: options.maxIter ?? 200,
    gradTolerance: options.gradTolerance ?? 1e-5,
  });
  return new LogisticModel(
    options.kind,
    binary ? 2 : options.classes,
    dim,
    Float32Array.from(theta.subarray(0, nW)),
    Float32Array.from(theta.subarray(nW)),
  );
}

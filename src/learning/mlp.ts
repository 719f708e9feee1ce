/**
 * A one-hidden-layer perceptron for binary labels: dense input -> H ReLU units -> one logit. Weighted log loss
 * with L2 on the weights (not the biases), minibatch Adam, a seeded initialisation and shuffle: the same data and
 * seed give the same weights, bit for bit. A non-linear reading of a dense vector (a sentence embedding) where a
 * logistic regression sees only one direction.
 */
import { float32FromBase64, float32ToBase64 } from "./float32-base64.ts";
import { mulberry32 } from "./random.ts";

export interface MlpOptions {
  /** Seeds the initial weights and every epoch's shuffle. */
  seed: number;
  /** Hidden units (default 64). */
  hidden?: number;
  /** Passes over the data (default 15). */
  epochs?: number;
  /** Adam step size (default 0.003). */
  learningRate?: number;
  /** L2 penalty on the weight matrices, added to the weighted mean loss's gradient (default 1e-4). */
  l2?: number;
  /** Examples per step (default 64). */
  batch?: number;
  /** One weight per example (default 1 each). */
  sampleWeights?: readonly number[];
}

export interface MlpJson {
  kind: "mlp-relu";
  dim: number;
  hidden: number;
  /** Hidden-unit-major input weights (hidden x dim), base64 little-endian float32. */
  w1: string;
  /** Hidden biases, output weights (hidden each) and output bias: base64 little-endian float32. */
  b1: string;
  w2: string;
  b2: number;
}

export class Mlp {
  readonly dim: number;
  readonly hidden: number;
  readonly w1: Float32Array;
  readonly b1: Float32Array;
  readonly w2: Float32Array;
  /** Output bias, kept as float32 like every other parameter. */
  readonly b2: Float32Array;
  private readonly h: Float32Array;

  constructor(dim: number, hidden: number, w1: Float32Array, b1: Float32Array, w2: Float32Array, b2: number) {
    if (w1.length !== dim * hidden || b1.length !== hidden || w2.length !== hidden)
      throw new Error("mlp: weight shapes do not match dim x hidden");
    this.dim = dim;
    this.hidden = hidden;
    this.w1 = w1;
    this.b1 = b1;
    this.w2 = w2;
    this.b2 = Float32Array.of(b2);
    this.h = new Float32Array(hidden);
  }

  /** The logit; leaves the hidden activations in `this.h` for the trainer's backward pass. */
  private forward(x: Float32Array): number {
    const { dim: D, hidden: H, w1, b1, w2, h } = this;
    if (x.length !== D) throw new Error(`mlp: input has ${x.length} values, want ${D}`);
    let z = this.b2[0];
    for (let k = 0; k < H; k++) {
      let a = b1[k];
      for (let j = 0, o = k * D; j < D; j++) a += w1[o + j] * x[j];
      h[k] = Math.max(a, 0);
      z += w2[k] * h[k];
    }
    return z;
  }

  /** The raw score (logit) of label 1. */
  decision(x: Float32Array): number {
    return this.forward(x);
  }

  toJSON(): MlpJson {
    return {
      kind: "mlp-relu",
      dim: this.dim,
      hidden: this.hidden,
      w1: float32ToBase64(this.w1),
      b1: float32ToBase64(this.b1),
      w2: float32ToBase64(this.w2),
      b2: this.b2[0],
    };
  }

  static fromJSON(json: MlpJson): Mlp {
    if (json.kind !== "mlp-relu") throw new Error(`mlp: unknown kind ${json.kind}`);
    const { dim, hidden } = json;
    return new Mlp(
      dim,
      hidden,
      float32FromBase64(json.w1, { length: dim * hidden, what: "mlp: w1" }),
      float32FromBase64(json.b1, { length: hidden, what: "mlp: b1" }),
      float32FromBase64(json.w2, { length: hidden, what: "mlp: w2" }),
      json.b2,
    );
  }

  /** Trains on dense rows with labels 0/1 (see MlpOptions for the defaults). */
  static train(x: readonly Float32Array[], y: readonly number[], options: MlpOptions): Mlp {
    if (x.length === 0) throw new Error("mlp: no examples");
    if (x.length !== y.length) throw new Error("mlp: x and y lengths differ");
    const w = options.sampleWeights ?? x.map(() => 1);
    if (w.length !== x.length) throw new Error("mlp: one sample weight per example");
    for (const c of y) if (c !== 0 && c !== 1) throw new Error(`mlp: bad label ${c}`);
    const D = x[0].length;
    const H = options.hidden ?? 64;
    const epochs = options.epochs ?? 15;
    const lr = options.learningRate ?? 0.003;
    const l2 = options.l2 ?? 1e-4;
    const batch = options.batch ?? 64;
    const rnd = mulberry32(options.seed);
    // Glorot-uniform weights, zero biases.
    const init = (n: number, fan: number) =>
      new Float32Array(n).map(() => (rnd() - 0.5) * 2 * Math.sqrt(6 / fan));
    const net = new Mlp(D, H, init(H * D, D + H), new Float32Array(H), init(H, H + 1), 0);
    const params = [net.w1, net.b1, net.w2, net.b2];
    const grads = params.map((p) => new Float32Array(p.length));
    const m = params.map((p) => new Float32Array(p.length));
    const v = params.map((p) => new Float32Array(p.length));
    const { h } = net;
    const order = x.map((_, i) => i);
    let step = 0;
    for (let epoch = 0; epoch < epochs; epoch++) {
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
      for (let s = 0; s < order.length; s += batch) {
        for (const g of grads) g.fill(0);
        let total = 0;
        for (let q = s; q < Math.min(s + batch, order.length); q++) {
          const r = order[q];
          const xr = x[r];
          const g = (1 / (1 + Math.exp(-net.forward(xr))) - y[r]) * w[r];
          total += w[r];
          grads[3][0] += g;
          for (let k = 0; k < H; k++) {
            grads[2][k] += g * h[k];
            if (h[k] <= 0) continue;
            const gh = g * net.w2[k];
            grads[1][k] += gh;
            for (let j = 0, o = k * D; j < D; j++) grads[0][o + j] += gh * xr[j];
          }
        }
        if (total <= 0) continue;
        step++;
        const c1 = 1 - 0.9 ** step;
        const c2 = 1 - 0.999 ** step;
        params.forEach((p, pi) => {
          const decay = pi === 0 || pi === 2 ? l2 : 0;
          const [gp, mp, vp] = [grads[pi], m[pi], v[pi]];
          for (let q = 0; q < p.length; q++) {
            const g = gp[q] / total + decay * p[q];
            mp[q] = 0.9 * mp[q] + 0.1 * g;
            vp[q] = 0.999 * vp[q] + 0.001 * g * g;
            p[q] -= (lr * (mp[q] / c1)) / (Math.sqrt(vp[q] / c2) + 1e-8);
          }
        });
      }
    }
    return net;
  }
}

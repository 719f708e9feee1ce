/** Probability calibration: temperature scaling of multinomial logits, and expected calibration error. */

export function softmaxWithTemperature(logits: ArrayLike<number>, temperature: number): number[] {
  let m = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < logits.length; k++) m = Math.max(m, logits[k] / temperature);
  const e = Array.from(logits, (z) => Math.exp(z / temperature - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

/** Mean negative log-likelihood of the labels under softmax(logits / T). */
export function temperatureNll(
  logits: readonly ArrayLike<number>[],
  labels: readonly number[],
  t: number,
): number {
  let nll = 0;
  for (let i = 0; i < logits.length; i++) {
    nll -= Math.log(Math.max(softmaxWithTemperature(logits[i], t)[labels[i]], 1e-15));
  }
  return nll / logits.length;
}

/**
 * The temperature T in [0.05, 20] that minimises the dev NLL (golden-section search on ln T; the NLL is
 * unimodal in T for fixed logits).
 */
export function fitTemperature(logits: readonly ArrayLike<number>[], labels: readonly number[]): number {
  if (logits.length === 0 || logits.length !== labels.length) throw new Error("fitTemperature: bad input");
  const f = (u: number) => temperatureNll(logits, labels, Math.exp(u));
  let a = Math.log(0.05);
  let b = Math.log(20);
  const r = (Math.sqrt(5) - 1) / 2;
  let c = b - r * (b - a);
  let d = a + r * (b - a);
  let fc = f(c);
  let fd = f(d);
  for (let i = 0; i < 60; i++) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - r * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + r * (b - a);
      fd = f(d);
    }
  }
  return Math.exp((a + b) / 2);
}

/**
 * Expected calibration error of top-label confidence: examples binned by max probability into `bins` equal-width
 * bins over [0, 1]; ECE = sum over bins of (bin size / n) * |accuracy - mean confidence|.
 */
export function expectedCalibrationError(
  probs: readonly ArrayLike<number>[],
  labels: readonly number[],
  bins = 10,
): number {
  if (probs.length === 0 || probs.length !== labels.length)
    throw new Error("expectedCalibrationError: bad input");
  const count = new Array(bins).fill(0);
  const conf = new Array(bins).fill(0);
  const correct = new Array(bins).fill(0);
  for (let i = 0; i < probs.length; i++) {
    let best = 0;
    for (let k = 1; k < probs[i].length; k++) if (probs[i][k] > probs[i][best]) best = k;
    const p = probs[i][best];
    const b = Math.min(bins - 1, Math.floor(p * bins));
    count[b]++;
    conf[b] += p;
    if (best === labels[i]) correct[b]++;
  }
  let ece = 0;
  for (let b = 0; b < bins; b++) {
    if (count[b] > 0) ece += (count[b] / probs.length) * Math.abs(correct[b] / count[b] - conf[b] / count[b]);
  }
  return ece;
}

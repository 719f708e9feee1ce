/** Limited-memory BFGS with a backtracking (Armijo) line search: deterministic, no learning rate to tune. */

export type Objective = (x: Float64Array, grad: Float64Array) => number;

export interface LbfgsOptions {
  maxIter: number;
  /** Stop when the largest gradient component falls below this. */
  gradTolerance: number;
  /** Stop when the relative decrease of the objective falls below this. */
  relTolerance: number;
  memory: number;
}

export interface LbfgsResult {
  x: Float64Array;
  value: number;
  iterations: number;
}

const dotv = (a: Float64Array, b: Float64Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

const maxAbs = (a: Float64Array): number => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
};

export function minimise(f: Objective, x0: Float64Array, options: Partial<LbfgsOptions> = {}): LbfgsResult {
  const { maxIter = 200, gradTolerance = 1e-5, relTolerance = 1e-9, memory = 10 } = options;
  const n = x0.length;
  let x = Float64Array.from(x0);
  let g = new Float64Array(n);
  let value = f(x, g);
  const sList: Float64Array[] = [];
  const yList: Float64Array[] = [];
  const rho: number[] = [];
  const dir = new Float64Array(n);
  const alpha = new Float64Array(memory);
  let iter = 0;
  for (; iter < maxIter; iter++) {
    if (maxAbs(g) < gradTolerance) break;
    // Two-loop recursion: dir = -H g.
    for (let i = 0; i < n; i++) dir[i] = -g[i];
    for (let k = sList.length - 1; k >= 0; k--) {
      alpha[k] = rho[k] * dotv(sList[k], dir);
      const y = yList[k];
      for (let i = 0; i < n; i++) dir[i] -= alpha[k] * y[i];
    }
    if (sList.length > 0) {
      const last = sList.length - 1;
      const gamma = dotv(sList[last], yList[last]) / dotv(yList[last], yList[last]);
      for (let i = 0; i < n; i++) dir[i] *= gamma;
    } else {
      const scale = 1 / Math.max(1, Math.sqrt(dotv(g, g)));
      for (let i = 0; i < n; i++) dir[i] *= scale;
    }
    for (let k = 0; k < sList.length; k++) {
      const beta = rho[k] * dotv(yList[k], dir);
      const s = sList[k];
      for (let i = 0; i < n; i++) dir[i] += (alpha[k] - beta) * s[i];
    }
    let slope = dotv(g, dir);
    if (slope >= 0) {
      // Not a descent direction (curvature info went stale): restart from steepest descent.
      sList.length = 0;
      yList.length = 0;
      rho.length = 0;
      for (let i = 0; i < n; i++) dir[i] = -g[i] / Math.max(1, Math.sqrt(dotv(g, g)));
      slope = dotv(g, dir);
    }
    let step = 1;
    const xNew = new Float64Array(n);
    const gNew = new Float64Array(n);
    let vNew = Number.POSITIVE_INFINITY;
    for (let tries = 0; tries < 40; tries++) {
      for (let i = 0; i < n; i++) xNew[i] = x[i] + step * dir[i];
      vNew = f(xNew, gNew);
      if (vNew <= value + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    if (!(vNew < value)) break;
    const s = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      s[i] = xNew[i] - x[i];
      y[i] = gNew[i] - g[i];
    }
    const sy = dotv(s, y);
    if (sy > 1e-12) {
      if (sList.length === memory) {
        sList.shift();
        yList.shift();
        rho.shift();
      }
      sList.push(s);
      yList.push(y);
      rho.push(1 / sy);
    }
    const rel = (value - vNew) / Math.max(Math.abs(value), Math.abs(vNew), 1);
    x = xNew;
    g = gNew;
    value = vNew;
    if (rel < relTolerance) {
      iter++;
      break;
    }
  }
  return { x, value, iterations: iter };
}

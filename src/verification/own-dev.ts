/**
 * Figures of a verifier on our judged pairs (the dev split while building): pair weighted F1, per-label F1, and of
 * the Supports/Refutes labels predicted, the share judged otherwise and the share judged the opposite way; each with
 * a bootstrap 95% interval over claims (a claim's pairs are resampled together).
 */

import { type Interval, itemInterval } from "../evaluation/bootstrap.ts";
import { verificationF1 } from "../evaluation/metrics.ts";
import { LABELS, type Label, NEI } from "../types.ts";

export interface JudgedFigures {
  pairs: number;
  claims: number;
  weightedF1: Interval;
  f1: Record<Label, Interval>;
  /** Supports/Refutes predictions. */
  decisive: number;
  /** Of the Supports/Refutes predictions, the share judged another label. */
  otherwise: Interval;
  /** Of the Supports/Refutes predictions, the share judged the opposite label. */
  opposite: Interval;
}

function perLabelF1(pred: readonly Label[], gold: readonly Label[], label: Label): number {
  let tp = 0;
  let p = 0;
  let g = 0;
  pred.forEach((x, i) => {
    if (x === label) p++;
    if (gold[i] === label) g++;
    if (x === label && gold[i] === label) tp++;
  });
  return p + g === 0 ? 0 : (2 * tp) / (p + g);
}

export function judgedFigures(
  pairs: readonly { claimId: string; label: Label }[],
  pred: readonly Label[],
): JudgedFigures {
  const claims = [...new Set(pairs.map((p) => p.claimId))];
  const rowsOf = new Map<string, number[]>(claims.map((c) => [c, []]));
  pairs.forEach((p, i) => {
    rowsOf.get(p.claimId)?.push(i);
  });
  const rows = (sample: number[]) => sample.flatMap((c) => rowsOf.get(claims[c]) ?? []);
  const interval = (stat: (r: number[]) => number) => itemInterval(claims.length, (s) => stat(rows(s)));
  const goldOf = (r: number[]) => r.map((i) => pairs[i].label);
  const predOf = (r: number[]) => r.map((i) => pred[i]);
  const share = (wrong: (p: Label, g: Label) => boolean) => (r: number[]) => {
    const decisive = r.filter((i) => pred[i] !== NEI);
    return decisive.length
      ? decisive.filter((i) => wrong(pred[i], pairs[i].label)).length / decisive.length
      : 0;
  };
  return {
    pairs: pairs.length,
    claims: claims.length,
    weightedF1: interval((r) => verificationF1(predOf(r), goldOf(r)).weighted),
    f1: Object.fromEntries(
      LABELS.map((l) => [l, interval((r) => perLabelF1(predOf(r), goldOf(r), l))]),
    ) as Record<Label, Interval>,
    decisive: pred.filter((l) => l !== NEI).length,
    otherwise: interval(share((p, g) => p !== g)),
    opposite: interval(share((p, g) => g !== NEI && p !== g)),
  };
}

const f3 = (x: number) => x.toFixed(3);
/** "0.512 [0.401, 0.633]" */
export const showInterval = (i: Interval) => `${f3(i.value)} [${f3(i.low)}, ${f3(i.high)}]`;

/**
 * How the built-in Ev2R judge should decide that a text supports an atomic fact, by measurement. Atomic statements
 * with gold support: SciFact claims (written to be atomic) against their evidence and non-evidence abstracts, and
 * Climate-FEVER claims against their evidence sentences; supported = gold Supports. Candidates: the best USE-lite
 * cosine between the statement and a sentence of the text, the verifier's P(Supports), and the verifier's label.
 * Thresholds are tuned on the verifier's train split for support F1 and scored on its dev split.
 */
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { SUPPORT_THRESHOLD } from "../src/evaluation/judges/builtin.ts";
import type { Source, SourcedExample } from "../src/verification/examples.ts";
import { loadVerificationData } from "../src/verification/train.ts";
import type { Verifier } from "../src/verification/verifier.ts";
import { table } from "./report.ts";

interface Scored {
  supported: boolean;
  similarity: number;
  pSupports: number;
  labelSupports: number;
}

/** Area under the ROC curve (ties count half). */
export function rocAuc(rows: readonly { y: boolean; s: number }[]): number {
  const pos = rows.filter((r) => r.y);
  const neg = rows.filter((r) => !r.y);
  let a = 0;
  for (const p of pos) for (const n of neg) a += p.s > n.s ? 1 : p.s === n.s ? 0.5 : 0;
  return pos.length && neg.length ? a / (pos.length * neg.length) : Number.NaN;
}

export function f1At(rows: readonly { y: boolean; s: number }[], t: number): number {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const r of rows) {
    if (r.s >= t) r.y ? tp++ : fp++;
    else if (r.y) fn++;
  }
  return tp ? (2 * tp) / (2 * tp + fp + fn) : 0;
}

/** The threshold with the best F1 (the lowest on ties). */
export function bestThreshold(rows: readonly { y: boolean; s: number }[]): number {
  let best = { t: 0, f1: -1 };
  for (const t of [...new Set(rows.map((r) => r.s))].sort((a, b) => a - b)) {
    const f1 = f1At(rows, t);
    if (f1 > best.f1) best = { t, f1 };
  }
  return best.t;
}

export async function supportDecisionSection(verifier: Verifier): Promise<string> {
  const { train, dev } = await loadVerificationData();
  const encoder = await openUseLite({ workers: 2 });
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);
  const score = async (examples: readonly SourcedExample[]): Promise<Scored[]> => {
    const texts = [...new Set(examples.flatMap((e) => [e.claim, ...e.sentences]))];
    const vectors = await encoder.embed(texts);
    const vec = new Map(texts.map((t, i) => [t, vectors[i]]));
    const verdicts = await verifier.verifyPairs(
      examples.map((e) => ({ claim: e.claim, abstract: "", title: e.title, sentences: e.sentences })),
    );
    return examples.map((e, i) => ({
      supported: e.label === "Supports",
      similarity: Math.max(
        ...e.sentences.map((s) => dot(vec.get(e.claim) as Float32Array, vec.get(s) as Float32Array)),
      ),
      pSupports: verdicts[i].probs.supports,
      labelSupports: verdicts[i].label === "Supports" ? 1 : 0,
    }));
  };
  const rows: (string | number)[][] = [];
  try {
    for (const source of ["scifact", "climate-fever"] as Source[]) {
      const tr = await score(train.filter((e) => e.source === source));
      const dv = await score(dev.filter((e) => e.source === source));
      const view = (xs: Scored[], k: keyof Omit<Scored, "supported">) =>
        xs.map((x) => ({ y: x.supported, s: x[k] }));
      const simT = bestThreshold(view(tr, "similarity"));
      const pT = bestThreshold(view(tr, "pSupports"));
      const positives = dv.filter((x) => x.supported).length;
      const name = `${source} (${dv.length} dev pairs, ${positives} supported)`;
      rows.push(
        [
          name,
          "best sentence similarity (USE-lite cosine)",
          rocAuc(view(dv, "similarity")),
          simT,
          f1At(view(dv, "similarity"), simT),
        ],
        [
          name,
          "verifier P(Supports), train-tuned threshold",
          rocAuc(view(dv, "pSupports")),
          pT,
          f1At(view(dv, "pSupports"), pT),
        ],
        [
          name,
          `verifier P(Supports) ≥ ${SUPPORT_THRESHOLD} (shipped)`,
          "-",
          SUPPORT_THRESHOLD,
          f1At(view(dv, "pSupports"), SUPPORT_THRESHOLD),
        ],
        [name, "verifier label = Supports (previous rule)", "-", "-", f1At(view(dv, "labelSupports"), 1)],
      );
    }
  } finally {
    await encoder.close();
  }
  const f = (x: string | number) => (typeof x === "number" ? x.toFixed(3) : x);
  return `### How the built-in judge decides support (chosen by this measurement)

Atomic statements with gold support: SciFact claims (written to be atomic) against their evidence and non-evidence
abstracts, Climate-FEVER claims against their evidence sentences; supported = gold Supports. Thresholds tuned on
the verifier's train split for support F1, scored on its dev split (bench/ev2r-support.ts).

${table(
  ["dev set", "support decision", "ROC AUC", "threshold", "support F1"],
  rows.map((r) => r.map(f)),
)}

The verifier's P(Supports) ranks supported texts above unsupported ones better than sentence similarity on both
sets, and a threshold beats its own label (tuned for three-way weighted F1, it calls Supports sparingly), so the
judge uses P(Supports) ≥ ${SUPPORT_THRESHOLD}, about the SciFact train optimum (the judge's texts are whole abstracts).`;
}

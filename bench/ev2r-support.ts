/**
 * How the built-in Ev2R judge should decide that a text supports an atomic fact, by measurement. Atomic statements
 * with gold support: SciFact claims (written to be atomic) against their evidence and non-evidence abstracts, and
 * Climate-FEVER claims against their evidence sentences; supported = gold Supports. Candidates: the best USE-lite
 * cosine between the statement and a sentence of the text, the verifier's P(Supports), and the verifier's label.
 * Thresholds are tuned on the verifier's train split for support F1 and scored on its dev split.
 */
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { dot } from "../src/encoders/vector.ts";
import { SUPPORT_THRESHOLD } from "../src/evaluation/judges/builtin.ts";
import { f1At } from "../src/learning/thresholds.ts";
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

/** One decision's scores against gold support. */
interface Column {
  scores: number[];
  gold: boolean[];
}

/** Area under the ROC curve (ties count half). */
function rocAuc({ scores, gold }: Column): number {
  const pos = scores.filter((_, i) => gold[i]);
  const neg = scores.filter((_, i) => !gold[i]);
  let a = 0;
  for (const p of pos) for (const n of neg) a += p > n ? 1 : p === n ? 0.5 : 0;
  return pos.length && neg.length ? a / (pos.length * neg.length) : Number.NaN;
}

const f1Of = ({ scores, gold }: Column, t: number) => f1At(scores, gold, t);

/** The observed score with the best F1 as threshold (the lowest on ties). */
function bestThreshold(column: Column): number {
  let best = { t: 0, f1: -1 };
  for (const t of [...new Set(column.scores)].sort((a, b) => a - b)) {
    const f1 = f1Of(column, t);
    if (f1 > best.f1) best = { t, f1 };
  }
  return best.t;
}

export async function supportDecisionSection(verifier: Verifier): Promise<string> {
  const { train, dev } = await loadVerificationData();
  const encoder = await openUseLite({ workers: 2 });
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
      const view = (xs: Scored[], k: keyof Omit<Scored, "supported">): Column => ({
        scores: xs.map((x) => x[k]),
        gold: xs.map((x) => x.supported),
      });
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
          f1Of(view(dv, "similarity"), simT),
        ],
        [
          name,
          "verifier P(Supports), train-tuned threshold",
          rocAuc(view(dv, "pSupports")),
          pT,
          f1Of(view(dv, "pSupports"), pT),
        ],
        [
          name,
          `verifier P(Supports) ≥ ${SUPPORT_THRESHOLD} (shipped)`,
          "-",
          SUPPORT_THRESHOLD,
          f1Of(view(dv, "pSupports"), SUPPORT_THRESHOLD),
        ],
        [name, "verifier label = Supports (previous rule)", "-", "-", f1Of(view(dv, "labelSupports"), 1)],
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

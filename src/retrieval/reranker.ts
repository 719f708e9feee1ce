/**
 * The trained re-ranker: a linear scoring function over standardised features, learnt pairwise (RankNet with a
 * linear scorer: logistic regression on feature differences of a relevant and a non-relevant candidate of the
 * same claim), so only the order within a claim is learnt, never a cross-claim calibration.
 */
import { readFileSync } from "node:fs";
import { writeFileAtomic } from "../data/tables.ts";
import { type LogisticJson, LogisticModel, trainLogistic } from "../learning/logistic.ts";
import { mulberry32, shuffle } from "../learning/random.ts";
import { fitStandardiser, type Standardiser, standardise } from "../learning/standardise.ts";
import type { CandidateDepth } from "./candidates.ts";
import type { Family } from "./features.ts";
import type { FusionWeights } from "./fusion.ts";

export const RERANKER_SCHEMA = 1;

export interface RerankerJson {
  schema: number;
  families: Family[];
  /** Vector sets the features use, with the encoder that built them (an index must match). */
  vectorSets: Record<string, string>;
  names: string[];
  standardiser: Standardiser;
  model: LogisticJson;
  fusion: FusionWeights;
  depth: CandidateDepth;
  /** How many fused candidates are re-ranked. */
  rerankDepth: number;
  /** L2 strength it was fitted with (cross-validated; the benchmark's ablations refit with it). */
  l2?: number;
  /**
   * Set by \`climatecheck-train ranking\` (train-judged.ts): \`model\` is then the stand-in weights plus \`weight\` x a
   * scorer learnt on our judged pairs; \`standIn\` keeps the stand-in weights, so a rerun starts from them.
   */
  judged?: { standIn: LogisticJson; weight: number; l2: number; claims: number };
}

export class Reranker {
  readonly json: RerankerJson;
  private readonly model: LogisticModel;

  constructor(json: RerankerJson) {
    if (json.schema !== RERANKER_SCHEMA)
      throw new Error(`re-ranker schema ${json.schema}, expected ${RERANKER_SCHEMA}`);
    this.json = json;
    this.model = LogisticModel.fromJSON(json.model);
  }

  static load(path: string): Reranker {
    return new Reranker(JSON.parse(readFileSync(path, "utf8")) as RerankerJson);
  }

  async save(path: string): Promise<void> {
    await writeFileAtomic(path, `${JSON.stringify(this.json)}\n`);
  }

  /**
   * The re-ranker for an index: the judged scorer was learnt on claims against the built-in corpus and is measured
   * there only (on SciFact and Climate-FEVER dev it cost R@5, BENCHMARKS.md "Retrieval"), so any other index gets
   * the stand-in weights.
   */
  forCorpus(builtinOnly: boolean): Reranker {
    if (builtinOnly || !this.json.judged) return this;
    return new Reranker({ ...this.json, model: this.json.judged.standIn, judged: undefined });
  }

  score(x: Float32Array): number {
    return this.model.decision(standardise(x, this.json.standardiser))[0];
  }
}

/** One claim's featurised candidates with relevance (1) or not (0). */
export interface TrainingGroup {
  rows: Float32Array[];
  relevant: boolean[];
  /** Weight of the group's pairs (e.g. to balance data sets). */
  weight: number;
}

export interface PairwiseOptions {
  l2: number;
  /** Non-relevant candidates paired with each relevant one: the best-ranked ones first, then random ones. */
  hardNegatives: number;
  randomNegatives: number;
  seed: number;
}

export const DEFAULT_PAIRWISE: PairwiseOptions = {
  l2: 1e-3,
  hardNegatives: 10,
  randomNegatives: 10,
  seed: 7,
};

/** Learns the linear scorer from the groups (rows in stage-1 order, so "best-ranked" = first). */
export function trainPairwise(
  groups: TrainingGroup[],
  options: PairwiseOptions = DEFAULT_PAIRWISE,
): { standardiser: Standardiser; model: LogisticModel } {
  const all = groups.flatMap((g) => g.rows);
  if (all.length === 0) throw new Error("trainPairwise: no training rows");
  const standardiser = fitStandardiser(all);
  const rng = mulberry32(options.seed);
  const x: Float32Array[] = [];
  const y: number[] = [];
  const w: number[] = [];
  for (const g of groups) {
    const z = g.rows.map((r) => standardise(r, standardiser));
    const pos = z.filter((_, i) => g.relevant[i]);
    const negIdx = z.map((_, i) => i).filter((i) => !g.relevant[i]);
    if (pos.length === 0 || negIdx.length === 0) continue;
    const hard = negIdx.slice(0, options.hardNegatives);
    const rest = shuffle(negIdx.slice(options.hardNegatives), rng).slice(0, options.randomNegatives);
    const negs = [...hard, ...rest].map((i) => z[i]);
    const pw = g.weight / (pos.length * negs.length);
    for (const p of pos) {
      for (const n of negs) {
        const d = new Float32Array(p.length);
        for (let j = 0; j < d.length; j++) d[j] = p[j] - n[j];
        // Both orientations, so the problem is symmetric and the bias stays at zero.
        x.push(
          d,
          d.map((v) => -v),
        );
        y.push(1, 0);
        w.push(pw, pw);
      }
    }
  }
  if (x.length === 0)
    throw new Error("trainPairwise: no claim has both relevant and non-relevant candidates");
  const model = trainLogistic(x, y, all[0].length, {
    kind: "binary",
    classes: 2,
    l2: options.l2,
    sampleWeights: w,
    maxIter: 300,
  });
  return { standardiser, model };
}

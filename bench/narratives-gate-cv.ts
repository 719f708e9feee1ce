/**
 * Issue 23's gate candidates, out of fold on the training stance rows only (no dev row is read): the fast model's
 * linear gate (word + char + desc + cues + contrast, GWSD left out as the shipped fast gate does) under each
 * variant, calibrated and thresholded as the trainer does (Platt, chooseGateThreshold), with its worst ratio of
 * error to allowance and the out-of-fold shares of the target cells. A variant is a "+"-joined list of:
 * `cwK` (written texts weigh K times more), `pairK` (paired difference rows of total weight K times the written
 * texts'), `mk` (the markers block), `charS` / `wordS` (that block's values scaled by S: a stronger L2 on it for S < 1).
 * Section `npm run bench -- narratives-gate-cv` runs CANDIDATES (about 6 minutes a variant on 2 idle cores, over
 * 20 on busy shared ones); `node --import tsx bench/narratives-gate-cv.ts VARIANT ...` prints others.
 */

import { fileURLToPath } from "node:url";
import type { SparseVector } from "../src/learning/sparse.ts";
import { loadNarrativeData } from "../src/narratives/data.ts";
import { NarrativeFeatures, prototypeTexts } from "../src/narratives/features.ts";
import { MARKER_DIM } from "../src/narratives/markers.ts";
import { plattProbability } from "../src/narratives/model.ts";
import {
  cellShare,
  chooseGateThreshold,
  DEFAULT_TRAIN_OPTIONS,
  fitPlatt,
  foldOf,
  gateWorstRatio,
  linearGateOof,
  pairRows,
  prototypeRows,
  type Row,
  stanceCell,
  stanceWeights,
} from "../src/narratives/train.ts";
import { type BenchSection, loadAverage, table } from "./report.ts";

const CELLS = [
  "stance-favor",
  "cf-supports",
  "cf-evidence",
  "climatebert",
  "env-claims",
  "arxiv",
  "contrast:none",
  "cards:none",
  "flicc",
  "stance-against",
  "contrast:narrative",
  "cards:narrative",
];

/** The variants the section runs: the shipped gate, each candidate alone, and all together. */
export const CANDIDATES = ["base", "cw4", "pair1", "mk", "cw4+pair1+mk"];

const t0 = Date.now();
const log = (m: string) => process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}\n`);

export interface VariantResult {
  variant: string;
  threshold: number;
  worst: number;
  shares: Record<string, number>;
}

export async function runVariants(
  variants: readonly string[],
  onResult: (r: VariantResult) => void = () => {},
): Promise<VariantResult[]> {
  const data = await loadNarrativeData();
  const stance = data.stanceTrain.filter((e) => e.source !== "gwsd-agree" && e.source !== "gwsd-disagree");
  const o = DEFAULT_TRAIN_OPTIONS;
  const features = NarrativeFeatures.fit(
    [...new Set([...data.stanceTrain.map((e) => e.text), ...data.train.map((e) => e.text)])],
    {
      families: ["word", "char", "desc", "cues", "contrast", "markers"],
      wordMaxFeatures: o.wordMaxFeatures,
      charMaxFeatures: o.charMaxFeatures,
    },
  );
  const json = features.toJSON();
  const W = json.word?.terms.length ?? 0;
  const C = json.char?.terms.length ?? 0;
  const markerStart = features.dim - MARKER_DIM;
  log(`features ${features.dim} dims; ${stance.length} stance rows`);
  const x = stance.map((e) => features.vector(e.text));
  const proto = prototypeTexts();
  const protoX = [
    ...proto.descriptions.map((t) => ({ x: features.vector(t), narrative: true, w: o.descWeight })),
    ...proto.rebuttals.map((t) => ({ x: features.vector(t), narrative: false, w: o.descWeight })),
  ];
  const cells = stance.map(stanceCell);
  const labels = stance.map((e) => (e.narrative ? 1 : 0));
  const folds = stance.map((e) => foldOf(e.foldKey ?? e.text, o.folds));

  const transform = (v: SparseVector, mk: boolean, charS: number, wordS: number): SparseVector => {
    const indices: number[] = [];
    const values: number[] = [];
    for (let k = 0; k < v.indices.length; k++) {
      const j = v.indices[k];
      if (!mk && j >= markerStart) continue;
      const s = j < W ? wordS : j < W + C ? charS : 1;
      indices.push(j);
      values.push(v.values[k] * s);
    }
    return { indices, values };
  };

  const out: VariantResult[] = [];
  for (const variant of variants) {
    const parts = variant.split("+");
    const num = (p: string, d: number) => {
      const hit = parts.find((q) => q.startsWith(p) && !Number.isNaN(Number(q.slice(p.length))));
      return hit ? Number(hit.slice(p.length)) : d;
    };
    const mk = parts.includes("mk");
    const gate = { ...o.gate, contrastWeight: num("cw", 1), pairWeight: num("pair", 0) };
    const charS = num("char", 1);
    const wordS = num("word", 1);
    const xs = x.map((v) => transform(v, mk, charS, wordS));
    const weights = stanceWeights(stance, gate);
    const rows: Row[] = stance.map((_, i) => ({ x: xs[i], y: labels[i], w: weights[i], fold: folds[i] }));
    const extra = [
      ...prototypeRows(protoX.map((p) => ({ ...p, x: transform(p.x, mk, charS, wordS) }))),
      ...pairRows(stance, xs, weights, { folds: o.folds, gate }),
    ];
    const logits = linearGateOof(rows, extra, features.dim, { folds: o.folds, gate });
    const platt = fitPlatt(logits, labels, weights);
    const p = logits.map((z) => plattProbability(z, platt));
    const threshold = chooseGateThreshold(cells, p);
    const r: VariantResult = {
      variant,
      threshold,
      worst: gateWorstRatio(cells, p, threshold),
      shares: Object.fromEntries(CELLS.map((c) => [c, cellShare(cells, p, c, threshold)])),
    };
    out.push(r);
    onResult(r);
    log(`${variant} done`);
  }
  return out;
}

const line = (r: VariantResult) =>
  `${r.variant}: worst ${r.worst.toFixed(3)} at ${r.threshold} | ${CELLS.map((c) => `${c} ${r.shares[c].toFixed(3)}`).join(", ")}`;

export async function bench(): Promise<BenchSection> {
  const results = await runVariants(CANDIDATES, (r) => log(line(r)));
  const rows = results.map((r) => [
    r.variant,
    r.threshold.toFixed(2),
    r.worst.toFixed(3),
    ...CELLS.map((c) => r.shares[c].toFixed(3)),
  ]);
  return {
    id: "narratives-gate-cv",
    title: "Narratives gate: issue 23's stance candidates (out of fold, training rows only)",
    command: "npm run bench -- narratives-gate-cv",
    markdown: `The fast model's linear gate (word + char + desc + cues + contrast; GWSD left out, as in the shipped fast
gate) under each candidate, ${DEFAULT_TRAIN_OPTIONS.folds}-fold out of fold on the training stance rows (the written texts
folded by subject); Platt scaling and the threshold rule of the trainer (chooseGateThreshold). No dev row is read.
\`cwK\`: the written contrast texts weigh K times more in the gate; \`pairK\`: per written subject, contrarian-minus-
mainstream feature differences as extra rows (both signs) of total weight K times the written texts'; \`mk\`: the
markers block (src/narratives/markers.ts: leading rejection, quoted and reported claims, verdicts). Worst: the largest
ratio of a cell's error to its allowance (at most 1 meets every target). Cells: share given a narrative.

${table(["variant", "threshold", "worst", ...CELLS], rows)}

Load average at the end: ${loadAverage()}.`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runVariants(process.argv.slice(2), (r) => console.log(line(r)));
}

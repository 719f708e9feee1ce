/**
 * Issue 23's gate candidates, out of fold on the training stance rows only (no dev row is read): the fast model's
 * linear gate (word + char + desc + cues + contrast, GWSD left out as the shipped fast gate does) under each
 * variant, calibrated and thresholded as the trainer does (Platt, chooseGateThreshold), with its worst ratio of
 * error to allowance and the out-of-fold shares of the target cells. A variant is a "+"-joined list of:
 * `cwK` (written texts weigh K times more), `pairK` (paired difference rows of total weight K times the written
 * texts'), `mk` (the markers block), `charS` / `wordS` (that block's values scaled by S: a stronger L2 on it for S < 1).
 * `node --import tsx bench/narratives-gate-cv.ts base cw3 pair1 mk mk+cw3+pair1`
 */

import type { SparseVector } from "../src/learning/sparse.ts";
import { loadNarrativeData } from "../src/narratives/data.ts";
import { NARRATIVE_THRESHOLD } from "../src/narratives/decide.ts";
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

const t0 = Date.now();
const log = (m: string) => process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}\n`);
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
log("vectors done");
const cells = stance.map(stanceCell);
const labels = stance.map((e) => (e.narrative ? 1 : 0));
const folds = stance.map((e) => foldOf(e.foldKey ?? e.text, o.folds));

function transform(v: SparseVector, mk: boolean, charS: number, wordS: number): SparseVector {
  const indices: number[] = [];
  const values: number[] = [];
  for (let k = 0; k < v.indices.length; k++) {
    const j = v.indices[k];
    if (!mk && j >= markerStart) continue;
    let s = 1;
    if (j < W) s = wordS;
    else if (j < W + C) s = charS;
    indices.push(j);
    values.push(v.values[k] * s);
  }
  return { indices, values };
}

for (const variant of process.argv.slice(2)) {
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
  const worst = gateWorstRatio(cells, p, threshold);
  const shares = CELLS.map((c) => `${c} ${cellShare(cells, p, c, threshold).toFixed(3)}`).join(", ");
  // The same ranking at the check rule's 0.5 after folding: identical by construction; also at 0.5 unfolded.
  console.log(
    `${variant}: worst ${worst.toFixed(3)} at ${threshold} (${extra.length} extra rows) | ${shares} | at ${NARRATIVE_THRESHOLD}: worst ${gateWorstRatio(cells, p, NARRATIVE_THRESHOLD).toFixed(3)}`,
  );
  log(`${variant} done`);
}

import assert from "node:assert/strict";
import { test } from "node:test";
import type { SparseVector } from "../src/learning/sparse.ts";
import type { StanceExample } from "../src/narratives/data.ts";
import { NarrativeFeatures } from "../src/narratives/features.ts";
import { MARKER_DIM, markerVector, stanceMarkers } from "../src/narratives/markers.ts";
import { foldOf, gateWeights, pairRows, sparseDifference, stanceWeights } from "../src/narratives/train.ts";

const sv = (indices: number[], values: number[]): SparseVector => ({ indices, values });
const plain = (v: SparseVector) => ({ indices: Array.from(v.indices), values: Array.from(v.values) });

test("sparseDifference subtracts index by index and drops exact zeros", () => {
  const d = sparseDifference(sv([0, 2, 5], [1, 2, 3]), sv([2, 3, 5], [2, 1, 1]));
  assert.deepEqual(plain(d), { indices: [0, 3, 5], values: [1, -1, 2] });
});

const row = (
  text: string,
  narrative: boolean,
  source: StanceExample["source"],
  foldKey?: string,
): StanceExample => ({
  id: text,
  text,
  narrative,
  source,
  ...(foldKey ? { foldKey } : {}),
});

const stance: StanceExample[] = [
  row("a1", true, "contrast", "contrast:1_1/sea-ice"),
  row("a2", true, "contrast", "contrast:1_1/sea-ice"),
  row("m1", false, "contrast", "contrast:1_1/sea-ice"),
  row("b1", true, "contrast", "contrast:2_1/sun"),
  row("n1", false, "contrast", "contrast:2_1/sun"),
  row("n2", false, "contrast", "contrast:2_1/sun"),
  row("lone", true, "contrast", "contrast:3_2/bears"),
  row("favor", false, "stance-favor"),
  row("flicc", true, "flicc"),
];
const vectors = stance.map((_, i) => sv([i], [1]));

test("stanceWeights: the written texts weigh contrastWeight times more, mean weight still 1", () => {
  const base = gateWeights(stance, 1);
  const w = stanceWeights(stance, { l2: 1e-4, noneWeight: 1, contrastWeight: 3 });
  assert.ok(Math.abs(w.reduce((s, x) => s + x, 0) / w.length - 1) < 1e-9);
  // Written over other rows: three times the ratio without the option.
  const ratio = (ws: number[]) => ws[0] / ws[8];
  assert.ok(Math.abs(ratio(w) / ratio(base) - 3) < 1e-9);
  assert.deepEqual(stanceWeights(stance, { l2: 1e-4, noneWeight: 1 }), base);
});

test("pairRows: a subject's contrarian-minus-mainstream differences, both signs, in its fold, each subject weighing the same", () => {
  const weights = stance.map(() => 1);
  const options = { folds: 4, gate: { l2: 1e-4, noneWeight: 1, pairWeight: 2 } };
  const rows = pairRows(stance, vectors, weights, options);
  // sea-ice: 2 x 1 pairs, sun: 1 x 2; bears has no mainstream text: no pair. Two rows per pair.
  assert.equal(rows.length, 8);
  for (let k = 0; k < rows.length; k += 2) {
    assert.equal(rows[k].y, 1);
    assert.equal(rows[k + 1].y, 0);
    assert.deepEqual(
      plain(rows[k + 1].x).values,
      plain(rows[k].x).values.map((v) => -v),
    );
  }
  // a1 - m1: +1 at a1's index, -1 at m1's.
  assert.deepEqual(plain(rows[0].x), { indices: [0, 2], values: [1, -1] });
  assert.equal(rows[0].fold, foldOf("contrast:1_1/sea-ice", 4));
  assert.equal(rows[4].fold, foldOf("contrast:2_1/sun", 4));
  // Total weight: pairWeight x the written rows' weight (7), half per subject.
  const total = rows.reduce((s, r) => s + r.w, 0);
  assert.ok(Math.abs(total - 14) < 1e-9);
  const seaIce = rows.slice(0, 4).reduce((s, r) => s + r.w, 0);
  assert.ok(Math.abs(seaIce - 7) < 1e-9);
  assert.deepEqual(pairRows(stance, vectors, weights, { folds: 4, gate: { l2: 1e-4, noneWeight: 1 } }), []);
});

test("markers: a leading rejection, a quoted or reported claim and a short verdict are marked apart from assertions", () => {
  assert.ok(stanceMarkers("No, Arctic ice is not recovering").includes("lead:no"));
  assert.ok(!stanceMarkers("Arctic ice is not recovering").includes("lead:no"));
  const quoted = stanceMarkers('The "they renamed it" argument assumes the warming stopped. It didn\'t.');
  assert.ok(quoted.includes("quoted") && quoted.includes("repword:renamed"));
  assert.ok(quoted.includes("report:argument") && quoted.includes("rep:stopped:+"));
  assert.ok(quoted.includes("verdict") && quoted.includes("short-negation"));
  const reported = stanceMarkers("Some claim the sun drives warming; the data say otherwise");
  assert.ok(reported.includes("rep:sun:+") && reported.includes("turn:the data"));
  // An assertion carries none of the report marks.
  assert.ok(!stanceMarkers("The sun drives the warming.").some((m) => m.startsWith("rep")));
  const v = markerVector("No, Arctic ice is not recovering");
  assert.ok(v.indices.every((i) => i >= 0 && i < MARKER_DIM));
  assert.ok(Math.abs(Math.hypot(...v.values) - 1) < 1e-9);
});

test("the markers family adds its block last: the other blocks keep their offsets", () => {
  const texts = ["sea ice is shrinking fast", "No, sea ice is not recovering", "the sun drives warming"];
  const config = { wordMaxFeatures: 100, charMaxFeatures: 100 };
  const without = NarrativeFeatures.fit(texts, { ...config, families: ["word", "cues"] });
  const withIt = NarrativeFeatures.fit(texts, { ...config, families: ["word", "cues", "markers"] });
  assert.equal(withIt.dim, without.dim + MARKER_DIM);
  const a = without.vector(texts[1]);
  const b = withIt.vector(texts[1]);
  const head = plain(b).indices.filter((i) => i < without.dim);
  assert.deepEqual(head, plain(a).indices);
  assert.ok(plain(b).indices.some((i) => i >= without.dim));
});

import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { NEI } from "../src/types.ts";
import { openBuiltinVerifier } from "../src/verification/builtin.ts";
import type { SourcedExample } from "../src/verification/examples.ts";
import { VerificationModel } from "../src/verification/model.ts";
import { loadOwnData } from "../src/verification/own-data.ts";
import { judgedFigures } from "../src/verification/own-dev.ts";
import {
  BUILTIN_OTHERS_GRID,
  chooseBuiltinKind,
  chooseOwnWeight,
  GUARD,
  OWN_WEIGHT_GRID,
} from "../src/verification/source-weights.ts";
import { trainVerificationModel } from "../src/verification/train.ts";

const jsonl = (rows: object[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

const ABSTRACTS: Record<string, { title: string; sentences: string[] }> = {
  a1: {
    title: "Arctic sea ice",
    sentences: ["We use satellites.", "Arctic sea ice extent declined since 1979."],
  },
  a2: {
    title: "Sea level",
    sentences: ["Tide gauges were read.", "Global sea level rose 20 cm since 1900."],
  },
  a3: { title: "Coral", sentences: ["Reefs were surveyed.", "Bleaching became more frequent."] },
  a4: { title: "Soil", sentences: ["Soil carbon was measured in 40 plots."] },
};

async function ownDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "own-data-"));
  await mkdir(join(dir, "judged"));
  await mkdir(join(dir, "abstract-claims"));
  const claim = (id: string, split: string) => ({
    claim_id: id,
    claim: `claim ${id}`,
    stance: "accurate",
    subject: "ice",
    cards: ["0_0"],
    split,
  });
  await writeFile(
    join(dir, "judged", "claims.jsonl"),
    jsonl([claim("tr1", "train"), claim("dv1", "dev"), claim("te1", "test")]),
  );
  const pair = (claimId: string, abstractId: string, label: string, evidence: string[]) => ({
    claim_id: claimId,
    abstract_id: abstractId,
    about: true,
    label,
    evidence,
    judge: "J1",
  });
  await writeFile(
    join(dir, "judged", "judgements.jsonl"),
    jsonl([
      pair("tr1", "a1", "Supports", ["Arctic sea ice extent declined since 1979."]),
      pair("tr1", "a4", NEI, []),
      pair("dv1", "a2", "Refutes", ["Global sea level rose 20 cm since 1900."]),
      pair("te1", "a3", "Supports", ["Bleaching became more frequent."]),
    ]),
  );
  const written = (id: string, abstractId: string, label: string, evidence: string[]) => ({
    id,
    abstract_id: abstractId,
    claim: `written ${id}`,
    label,
    evidence,
    writer: "A",
  });
  await writeFile(
    join(dir, "abstract-claims", "claims.jsonl"),
    jsonl([
      written("w1", "a4", "Supports", ["Soil carbon was measured in 40 plots."]),
      written("w2", "a4", NEI, []),
      { id: "w3", abstract_id: "a1", skip: "no finding" },
      // On an abstract a test claim was judged on: never trained on.
      written("w4", "a3", "Refutes", ["Bleaching became more frequent."]),
    ]),
  );
  return dir;
}

test("own pairs: judged train claims and written claims train, judged dev claims score, test claims never", async () => {
  const dir = await ownDataDir();
  try {
    const own = await loadOwnData(dir, (id) => ABSTRACTS[id]);
    assert.deepEqual(
      own.train.map((e) => [e.source, e.claimId, e.abstractId, e.label, e.rationale]),
      [
        ["own", "tr1", "a1", "Supports", [1]],
        ["own", "tr1", "a4", NEI, []],
        ["own", "w1", "a4", "Supports", [0]],
        ["own", "w2", "a4", NEI, []],
      ],
    );
    assert.equal(own.train[0].claim, "claim tr1");
    // Judged pairs are marked (the built-in corpus model tunes its decision on them); written ones are not.
    assert.deepEqual(
      own.train.map((e) => e.judged === true),
      [true, true, false, false],
    );
    assert.ok(own.dev.every((e) => e.judged === true));
    assert.deepEqual(own.train[0].sentences, ABSTRACTS.a1.sentences);
    assert.deepEqual(
      own.dev.map((e) => [e.claimId, e.abstractId, e.label, e.rationale]),
      [["dv1", "a2", "Refutes", [1]]],
    );
    assert.equal(own.droppedWritten, 1);
    const all = [...own.train, ...own.dev];
    assert.ok(!all.some((e) => e.claimId === "te1" || e.abstractId === "a3"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("own pairs absent: nothing is added", async () => {
  const dir = await mkdtemp(join(tmpdir(), "own-none-"));
  try {
    assert.deepEqual(await loadOwnData(dir, () => undefined), { train: [], dev: [], droppedWritten: 0 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Multi-sentence pairs whose label is told by "rises" / "falls" / an unrelated sentence. */
function pairs(n: number, prefix: string, source: SourcedExample["source"]): SourcedExample[] {
  const things = ["ice", "rain", "drought", "coral", "forest", "wind", "snow", "soil"];
  return Array.from({ length: n }, (_, i) => {
    const t = things[i % things.length];
    const kind = i % 3;
    const evidence =
      kind === 0
        ? `We find that ${t} loss rises in region ${i % 5}.`
        : kind === 1
          ? `We find that ${t} loss does not rise; no significant trend.`
          : `The ${things[(i + 3) % things.length]} archive was digitised.`;
    const label = kind === 0 ? "Supports" : kind === 1 ? "Refutes" : NEI;
    return {
      source,
      claimId: `${prefix}${i}`,
      claim: `${t} loss rises in region ${i % 5}`,
      abstractId: `${prefix}a${i}`,
      sentences: [`Data from ${2000 + i} were used.`, evidence],
      label,
      rationale: label === NEI ? [] : [1],
    };
  });
}

test("the own weight is chosen by out-of-fold F1 on own pairs, guarded by the other sources", async () => {
  const train = [...pairs(150, "s", "scifact"), ...pairs(90, "o", "own")];
  const trained = await trainVerificationModel(train, { folds: 2 });
  const choice = chooseOwnWeight(trained, train);
  assert.deepEqual(
    choice.trials.map((t) => t.own),
    [...OWN_WEIGHT_GRID],
  );
  const reference = choice.trials[0];
  assert.equal(reference.own, 0);
  assert.ok(reference.guarded);
  for (const t of choice.trials) assert.equal(t.guarded, t.oof.scifact >= reference.oof.scifact - GUARD);
  // No own pair is judged here, so the choice falls back on all own pairs.
  assert.ok(choice.trials.every((t) => Number.isNaN(t.judged)));
  const best = Math.max(...choice.trials.filter((t) => t.guarded).map((t) => t.oof.own));
  assert.ok(choice.chosen.guarded);
  assert.equal(choice.chosen.oof.own, best);
  assert.ok(
    choice.trials.some((t) => t.oof.own > 0.8),
    JSON.stringify(choice.trials),
  );
  // Every train pair has its out-of-fold label, own pairs included.
  assert.equal(choice.refitted.calibration.oofLabels.filter(Boolean).length, train.length);
  // The weight reaches the pair model.
  const zero = trained.refit(trained.model.pairGroups as never, { sourceWeights: { own: 0 } }).model;
  const four = trained.refit(trained.model.pairGroups as never, { sourceWeights: { own: 4 } }).model;
  assert.notDeepEqual(zero.pairs.multi.model, four.pairs.multi.model);
});

test("with judged own pairs, the own weight is chosen by their out-of-fold F1 alone", async () => {
  // Every other own pair is judged; the written ones (the rest) do not count for the choice.
  const own = pairs(90, "o", "own").map((e, i) => (i % 2 ? e : { ...e, judged: true }));
  const train = [...pairs(150, "s", "scifact"), ...own];
  const trained = await trainVerificationModel(train, { folds: 2 });
  const choice = chooseOwnWeight(trained, train);
  assert.ok(choice.trials.every((t) => t.judged >= 0 && t.judged <= 1));
  const best = Math.max(...choice.trials.filter((t) => t.guarded).map((t) => t.judged));
  assert.equal(choice.chosen.judged, best);
  // Ties go to the smaller weight.
  const first = choice.trials.find((t) => t.guarded && t.judged === best);
  assert.equal(choice.chosen.own, first?.own);
});

test("judged figures: weighted F1 and the Supports/Refutes shown judged otherwise or the opposite way", () => {
  const gold = [
    { claimId: "c1", label: "Supports" as const },
    { claimId: "c1", label: NEI },
    { claimId: "c2", label: "Refutes" as const },
    { claimId: "c2", label: NEI },
  ];
  const f = judgedFigures(gold, ["Supports", "Supports", "Supports", NEI]);
  assert.equal(f.decisive, 3);
  assert.equal(f.claims, 2);
  assert.ok(Math.abs(f.otherwise.value - 2 / 3) < 1e-9);
  assert.ok(Math.abs(f.opposite.value - 1 / 3) < 1e-9);
  assert.equal(f.f1.Refutes.value, 0);
  assert.ok(f.otherwise.low <= f.otherwise.value && f.otherwise.value <= f.otherwise.high);
});

/** Own pairs told the other way round: "rises" refutes, "does not rise" supports (what SciFact pairs never teach). */
const reversed = (n: number): SourcedExample[] =>
  pairs(n, "o", "own").map((e) => ({
    ...e,
    judged: true,
    label: e.label === "Supports" ? "Refutes" : e.label === "Refutes" ? "Supports" : e.label,
  }));

test("the built-in corpus model: chosen by judged out-of-fold F1, fitted on own pairs, used for built-in abstracts only", async () => {
  const train = [...pairs(150, "s", "scifact"), ...reversed(90)];
  const trained = await trainVerificationModel(train, { folds: 2 });
  const choice = chooseBuiltinKind(trained, train, 0);
  assert.deepEqual(
    choice.trials.map((t) => t.others),
    [...BUILTIN_OTHERS_GRID],
  );
  const none = choice.trials[0];
  // The scientific-abstract model learnt the other way round; a model on own pairs alone reads them right.
  assert.ok(choice.chosen.others !== null, JSON.stringify(choice.trials));
  assert.ok(choice.chosen.judgedF1 > none.judgedF1 + 0.2, JSON.stringify(choice.trials));
  assert.equal(choice.chosen.judgedF1, Math.max(...choice.trials.map((t) => t.judgedF1)));
  const json = choice.refitted.model;
  assert.ok(json.builtinPair);
  const model = new VerificationModel(json);
  const claim = "ice loss rises in region 2";
  const sentences = [
    "Data from 2002 were used.",
    "We find that ice loss does not rise; no significant trend.",
  ];
  const noEncoder = async (): Promise<Float32Array[]> => [];
  const label = async (builtin: boolean) =>
    (await model.verdicts([model.prepare(claim, sentences, undefined, builtin)], noEncoder)).verdicts[0]
      .label;
  assert.equal(await label(false), "Refutes");
  assert.equal(await label(true), "Supports");
  // The verifier routes pairs from an index of the built-in corpus (an abstract id) to it, free text never.
  const onBuiltin = await openBuiltinVerifier({ model, builtinCorpus: true });
  const elsewhere = await openBuiltinVerifier({ model });
  const pair = { claim, abstract: sentences.join(" "), sentences };
  const [fromIndex, freeText] = await onBuiltin.verifyPairs([{ ...pair, abstractId: "x" }, pair]);
  assert.equal(fromIndex.label, "Supports");
  assert.equal(freeText.label, "Refutes");
  assert.equal((await elsewhere.verifyPairs([{ ...pair, abstractId: "x" }]))[0].label, "Refutes");
  // Without judged own pairs nothing is chosen over the multi-sentence model.
  const unjudged = train.map((e) => ({ ...e, judged: undefined }));
  assert.equal(chooseBuiltinKind(trained, unjudged, 0, [null, 0]).chosen.others, null);
});

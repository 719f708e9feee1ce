import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { DataError } from "../src/data/errors.ts";
import { ownDataFiles, readJudgedClaims } from "../src/data/judged.ts";
import { trainingFiles } from "../src/data/paths.ts";
import { readGwsd } from "../src/data/training-sets.ts";
import { cohenKappa } from "../src/evaluation/metrics.ts";
import {
  CONTRAST_DIR,
  contrastSplit,
  readContrastDir,
  readContrastTexts,
  readSecondLabels,
} from "../src/narratives/data.ts";
import { decide, type NarrativeScores, type Thresholds } from "../src/narratives/decide.ts";
import { chooseClassifyThreshold } from "../src/narratives/train.ts";
import { canonicalCodeSet, NARRATIVE_CODES } from "../src/taxonomy/cards.ts";

const line = (o: Record<string, unknown>) => JSON.stringify(o);
const ok = {
  id: "nc-X-1",
  text: "Arctic sea ice is growing again, so much for the melt.",
  codes: ["1_1"],
  kind: "contrarian",
  target_code: "1_1",
  subject: "arctic-sea-ice",
};

async function withFile(name: string, text: string, run: (path: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "contrast-"));
  try {
    const path = join(dir, name);
    await writeFile(path, text);
    await run(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("the written-texts reader keeps each record's codes, kind, subject and its subject's split", async () => {
  const rebuttal = {
    ...ok,
    id: "nc-X-2",
    text: "No, Arctic ice is not recovering.",
    codes: ["0_0"],
    kind: "rebuttal",
  };
  await withFile("w.jsonl", `${line(ok)}\n${line(rebuttal)}\n`, async (path) => {
    const [a, b] = await readContrastTexts(path);
    assert.deepEqual(a.codes, ["1_1"]);
    assert.equal(b.kind, "rebuttal");
    assert.deepEqual(b.codes, ["0_0"]);
    // One subject, one split, whatever the text.
    assert.equal(a.split, b.split);
    assert.equal(a.split, contrastSplit("1_1", "arctic-sea-ice"));
  });
});

test("a bad written record is a DataError naming the file, line and field", async () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ ...ok, codes: ["9_9"] }, "codes", /unknown CARDS code "9_9"/],
    [{ ...ok, codes: ["0_0"] }, "codes", /contrarian text needs its codes/],
    [{ ...ok, kind: "mainstream" }, "codes", /mainstream text is 0_0 alone/],
    [{ ...ok, codes: ["1_2"] }, "codes", /carries its target code 1_1/],
    [{ ...ok, kind: "opinion" }, "kind", /must be one of/],
    [{ ...ok, subject: "Arctic Sea Ice" }, "subject", /lowercase slug/],
    [{ ...ok, target_code: "0_0" }, "target_code", /other than 0_0/],
    [{ ...ok, text: "" }, "text", /empty value/],
  ];
  for (const [record, field, message] of cases) {
    await withFile("w.jsonl", `${line(ok)}\n${line(record)}\n`, async (path) => {
      await assert.rejects(readContrastTexts(path), (e: unknown) => {
        assert.ok(e instanceof DataError, String(e));
        assert.equal(e.line, 2);
        assert.equal(e.field, field);
        assert.match(e.message, message);
        assert.ok(e.message.startsWith(path));
        return true;
      });
    });
  }
});

test("the subject split is seeded and about 60/20/20", () => {
  assert.equal(contrastSplit("2_1", "solar-activity"), contrastSplit("2_1", "solar-activity"));
  const n = 3000;
  const counts = { train: 0, dev: 0, test: 0 };
  for (let i = 0; i < n; i++) counts[contrastSplit("1_1", `subject-${i}`)]++;
  assert.ok(Math.abs(counts.train / n - 0.6) < 0.03, JSON.stringify(counts));
  assert.ok(Math.abs(counts.dev / n - 0.2) < 0.03, JSON.stringify(counts));
  assert.ok(Math.abs(counts.test / n - 0.2) < 0.03, JSON.stringify(counts));
});

test("the repository's written texts read cleanly, ids unique, each subject in one split", {
  skip: !existsSync(CONTRAST_DIR),
}, async () => {
  const texts = await readContrastDir();
  assert.equal(new Set(texts.map((t) => t.id)).size, texts.length);
  const sideOf = new Map<string, string>();
  for (const t of texts) {
    const key = `${t.targetCode}/${t.subject}`;
    assert.equal(sideOf.get(key) ?? t.split, t.split, key);
    sideOf.set(key, t.split);
  }
});

test("no written dev or test text, and no held-out GWSD sentence, is a training row", {
  skip: !existsSync(trainingFiles().gwsd),
}, async () => {
  const { loadNarrativeData, narrativesLearnFrom, splitKey } = await import("../src/narratives/data.ts");
  const d = await loadNarrativeData();
  const heldOut = new Set(
    [...(await readContrastDir()).filter((t) => t.split !== "train"), ...d.stanceDev].map((t) =>
      splitKey(t.text),
    ),
  );
  assert.equal(d.stanceTrain.filter((e) => heldOut.has(splitKey(e.text))).length, 0);
  const written = new Set(
    (await readContrastDir()).filter((t) => t.split !== "train").map((t) => splitKey(t.text)),
  );
  assert.equal(d.train.filter((e) => written.has(splitKey(e.text))).length, 0);
  const sources = new Set(d.stanceTrain.map((e) => e.source));
  for (const s of ["gwsd-agree", "gwsd-disagree"]) assert.ok(sources.has(s as never), s);
  // Our judged set's train claims up to uc-584 train, with their codes; the later ones (tried, left out) and its
  // dev and test claims never do.
  const judged = await readJudgedClaims(ownDataFiles().claims);
  const judgedRows = new Map(d.train.filter((e) => e.id.startsWith("judged:")).map((e) => [e.id, e]));
  for (const c of judged) {
    const row = judgedRows.get(`judged:${c.id}`);
    if (c.split !== "train" || !narrativesLearnFrom(c.id)) assert.equal(row, undefined, c.id);
    else if (!written.has(splitKey(c.claim))) assert.deepEqual(row?.codes, canonicalCodeSet(c.cards), c.id);
  }
  assert.ok(judgedRows.size > 300);
  const trainTexts = new Set(d.train.map((e) => splitKey(e.text)));
  assert.ok(judged.filter((c) => c.split !== "train").every((c) => !trainTexts.has(splitKey(c.claim))));
  // The written training texts share folds by subject.
  assert.ok(
    d.stanceTrain.filter((e) => e.source === "contrast").every((e) => e.foldKey?.startsWith("contrast:")),
  );
});

test("GWSD: each sentence's most probable stance; rows without an estimate skipped; a bad probability named", async () => {
  const header = "\tsentence\tworker_0\tdisagree\tagree\tneutral\tin_held_out_test\n";
  const rows = [
    "0\tGlobal warming is a hoax.\tdisagrees\t\t\t\tFalse",
    "1\tWarming is a threat.\tagrees\t0.1\t0.8\t0.1\tFalse",
    '2\t"Scientists ""claim"" it is warming."\tdisagrees\t0.7\t0.1\t0.2\tTrue',
  ];
  await withFile("g.tsv", `${header}${rows.join("\n")}\n`, async (path) => {
    const g = await readGwsd(path);
    assert.deepEqual(
      g.map((x) => [x.text, x.stance, x.heldOut]),
      [
        ["Warming is a threat.", "agree", false],
        ['Scientists "claim" it is warming.', "disagree", true],
      ],
    );
  });
  await withFile("g.tsv", `${header}1\tWarming.\tagrees\t0.1\tmuch\t0.1\tFalse\n`, async (path) => {
    await assert.rejects(readGwsd(path), /line 2, field "agree": expected a probability, got "much"/);
  });
});

test("the second labels: codes by id; an unknown code or a repeated id is named", async () => {
  await withFile("s.jsonl", `${line({ id: "a", codes: ["1_1", "1_0"] })}\n`, async (path) => {
    assert.deepEqual((await readSecondLabels(path)).get("a"), ["1_1"]);
  });
  await withFile(
    "s.jsonl",
    `${line({ id: "a", codes: ["0_0"] })}\n${line({ id: "a", codes: ["0_0"] })}\n`,
    async (p) => {
      await assert.rejects(readSecondLabels(p), /line 2, field "id"/);
    },
  );
});

test("Cohen's kappa: 1 for full agreement, 0 at chance, negative below it", () => {
  assert.equal(cohenKappa(["a", "b", "a"], ["a", "b", "a"]), 1);
  // Observed 0.5, expected 0.5 (each rater says a half of the time).
  assert.equal(cohenKappa(["a", "a", "b", "b"], ["a", "b", "a", "b"]), 0);
  assert.ok(cohenKappa(["a", "b"], ["b", "a"]) < 0);
  // 2x2 table [[20, 5], [10, 15]]: p_o = 0.7, p_e = 0.5 -> 0.4.
  const a = [...Array(25).fill("y"), ...Array(25).fill("n")];
  const b = [...Array(20).fill("y"), ...Array(5).fill("n"), ...Array(10).fill("y"), ...Array(15).fill("n")];
  assert.ok(Math.abs(cohenKappa(a, b) - 0.4) < 1e-12);
});

const thresholds: Thresholds = {
  group: [0, 0.5, 0.5, 0.5, 0.5, 0.5],
  code: Object.fromEntries(NARRATIVE_CODES.map((c) => [c, 0.4])),
  classifyNarrative: 0.25,
};
const scores = (narrative: number): NarrativeScores => ({
  narrative,
  group: [0, 0.9, 0.05, 0.05, 0, 0],
  code: { "1_1": 0.9 },
});

test("the two decision rules: check names a narrative from 0.5, classify from the model's lower threshold", () => {
  assert.deepEqual(decide(scores(0.3), thresholds, "group-code", "check"), ["0_0"]);
  assert.deepEqual(decide(scores(0.3), thresholds, "group-code", "classify"), ["1_1"]);
  assert.deepEqual(decide(scores(0.2), thresholds, "group-code", "classify"), ["0_0"]);
  // Check is the default, and a model without a classify threshold classifies as it checks.
  assert.deepEqual(decide(scores(0.3), thresholds, "group-code"), ["0_0"]);
  const { classifyNarrative: _, ...older } = thresholds;
  assert.deepEqual(decide(scores(0.3), older, "group-code", "classify"), ["0_0"]);
});

test("the classify threshold is the one that maximises out-of-fold CARDS mean F1, 0.5 when lowering does not pay", () => {
  // Four 1_1 texts the gate scores 0.45, 0.35, 0.3, 0.6, and four 0_0 texts at 0.1..0.2: 0.3 finds them all.
  const rows = [
    ...[0.45, 0.35, 0.3, 0.6].map((p) => ({ gold: ["1_1"], scores: scores(p) })),
    ...[0.1, 0.15, 0.2, 0.12].map((p) => ({ gold: ["0_0"], scores: scores(p) })),
  ];
  const chosen = chooseClassifyThreshold(rows, thresholds, "group-code");
  assert.equal(chosen.threshold, 0.3);
  assert.equal(chosen.f1, 1);
  assert.ok(chosen.atCheck < 1);
  // Every 1_1 text above 0.5 already: the check rule's threshold stays.
  const easy = rows.map((r) => (r.gold[0] === "1_1" ? { ...r, scores: scores(0.9) } : r));
  assert.equal(chooseClassifyThreshold(easy, thresholds, "group-code").threshold, 0.5);
});

test("the classify rule's single code: the top sub-code of the top group, where the hierarchy falls back to X_0", () => {
  // Group 1 wins; no sub-code passes its 0.4 threshold: the hierarchy names 1_0, "single" names the likeliest, 1_4.
  const weak: NarrativeScores = {
    narrative: 0.9,
    group: [0, 0.6, 0.4, 0, 0, 0],
    code: { "1_4": 0.3, "1_1": 0.2 },
  };
  assert.deepEqual(decide(weak, thresholds, "group-code", "classify"), ["1_0"]);
  assert.deepEqual(decide(weak, { ...thresholds, classifyCodes: "single" }, "group-code", "classify"), [
    "1_4",
  ]);
  // Two groups pass: the hierarchy names both, "single" one; the check rule ignores the classify way.
  const two: NarrativeScores = { ...weak, group: [0, 0.55, 0.52, 0, 0, 0], code: { "1_4": 0.9, "2_1": 0.8 } };
  assert.deepEqual(decide(two, thresholds, "group-code", "classify"), ["1_4", "2_1"]);
  assert.deepEqual(decide(two, { ...thresholds, classifyCodes: "single" }, "group-code", "classify"), [
    "1_4",
  ]);
  assert.deepEqual(decide(two, { ...thresholds, classifyCodes: "single" }, "group-code", "check"), [
    "1_4",
    "2_1",
  ]);
  // Out of fold, one-code gold (as CARDS) where the hierarchy says X_0: the trainer picks a way that names the code.
  const rows = [
    ...Array.from({ length: 4 }, () => ({ gold: ["1_4"], scores: weak })),
    ...[0.1, 0.2].map((p) => ({ gold: ["0_0"], scores: { ...weak, narrative: p } })),
  ];
  const chosen = chooseClassifyThreshold(rows, thresholds, "group-code");
  assert.notEqual(chosen.codes, "group-code");
  assert.equal(chosen.f1, 1);
  assert.ok(chosen.atCheck < 1);
});

test("the classify command writes the classify rule's codes; the classifier's default (check, the product) stays strict", async () => {
  const { FAST_MODEL_FILE, NARRATIVES_MODEL_DIR, NarrativeClassifier, readNarrativeModel } = await import(
    "../src/narratives/classifier.ts"
  );
  const { classifyClaimsFile } = await import("../src/cli/commands/classify.ts");
  const json = await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FAST_MODEL_FILE));
  // A classify threshold near 0: every claim passes the classify rule's gate.
  const lowered = { ...json, thresholds: { ...json.thresholds, classifyNarrative: 1e-6 } };
  const claim = "The Greenland ice sheet has lost mass every year since the late 1990s.";
  const [checked] = await new NarrativeClassifier(lowered).classify([claim]);
  assert.deepEqual(checked.codes, ["0_0"]);
  const dir = await mkdtemp(join(tmpdir(), "classify-rule-"));
  try {
    const model = join(dir, "model.json");
    await writeFile(model, JSON.stringify(lowered));
    await writeFile(join(dir, "claims.csv"), `claim_id,claim\nc1,"${claim}"\n`);
    await classifyClaimsFile({ claims: join(dir, "claims.csv"), out: join(dir, "out.csv"), model });
    const { readFile } = await import("node:fs/promises");
    const [, row] = (await readFile(join(dir, "out.csv"), "utf8")).trim().split("\n");
    assert.notEqual(row, "c1,0_0");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

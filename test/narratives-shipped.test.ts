import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import { gwsdSetting } from "../src/narratives/build.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../src/narratives/classifier.ts";
import { NARRATIVE_THRESHOLD } from "../src/narratives/decide.ts";
import { NARRATIVES_FORMAT } from "../src/narratives/model.ts";
import { chooseGateThreshold, gateWorstRatio, leximinBetter, mlpPays } from "../src/narratives/train.ts";

/** The same subject said both ways: only the contrarian one carries a narrative (1_1, "ice isn't melting"). */
const MAINSTREAM = "Arctic sea ice is shrinking fast";
const CONTRARIAN = "Arctic sea ice has been growing since 2012";

/** Where a shipped model still misses the pair, with its figure when last measured. */
for (const file of [FAST_MODEL_FILE, FULL_MODEL_FILE]) {
  test(`the shipped ${file} tells a mainstream claim from the contrarian one on the same subject`, async () => {
    const encoder = file === FULL_MODEL_FILE ? await openUseLite({ workers: 0, cacheDir: false }) : undefined;
    try {
      const c = await NarrativeClassifier.load(join(NARRATIVES_MODEL_DIR, file), encoder);
      const [m, k] = await c.classify([MAINSTREAM, CONTRARIAN]);
      assert.deepEqual(m.codes, ["0_0"]);
      assert.ok(m.narrative < NARRATIVE_THRESHOLD, `P(narrative) ${m.narrative}`);
      assert.ok(k.codes.includes("1_1"), `codes ${k.codes}`);
      assert.ok(k.narrative >= NARRATIVE_THRESHOLD);
      // The probabilities shown agree with the label: 0_0 is 1 - P(narrative).
      for (const p of [m, k]) assert.ok(Math.abs(p.probabilities["0_0"] - (1 - p.narrative)) < 1e-9);
    } finally {
      await encoder?.close();
    }
  });
}

/**
 * A written pair on one subject (Greenland's ice, dev split: never trained on) and a rebuttal that states the myth
 * only to reject it (data/narratives-contrast, issue 23).
 */
const WRITTEN_MAINSTREAM =
  "The Greenland ice sheet has lost mass every year since the late 1990s, on average a few hundred billion tonnes per year.";
const WRITTEN_CONTRARIAN =
  "Greenland's ice sheet is basically the same size it's been for centuries. Some summer melt, some winter snow. No crisis.";
const REBUTTAL = "No, Arctic ice is not recovering";
/**
 * Not met yet by full.json (issue 23): its gate reads this short rejection as the 1_1 claim itself (P(narrative)
 * 0.66); kept as a todo so it reports until it passes. fast.json (check's) has passed since it trained on the
 * minimal pairs and the judged claims.
 */
const REBUTTAL_TODO: Partial<Record<string, string>> = {
  [FULL_MODEL_FILE]: "issue 23: the short rejection still reads as the myth (full.json)",
};

for (const file of [FAST_MODEL_FILE, FULL_MODEL_FILE]) {
  test(`the shipped ${file} tells a written mainstream/contrarian pair on one subject apart`, async () => {
    const encoder = file === FULL_MODEL_FILE ? await openUseLite({ workers: 0, cacheDir: false }) : undefined;
    try {
      const c = await NarrativeClassifier.load(join(NARRATIVES_MODEL_DIR, file), encoder);
      const [m, k] = await c.classify([WRITTEN_MAINSTREAM, WRITTEN_CONTRARIAN]);
      assert.deepEqual(m.codes, ["0_0"], `mainstream P(narrative) ${m.narrative}`);
      assert.ok(k.codes.includes("1_1"), `contrarian codes ${k.codes} (P(narrative) ${k.narrative})`);
    } finally {
      await encoder?.close();
    }
  });

  const todo = REBUTTAL_TODO[file];
  test(
    `the shipped ${file}: a myth stated only to reject it carries no narrative`,
    todo ? { todo } : {},
    async () => {
      const encoder =
        file === FULL_MODEL_FILE ? await openUseLite({ workers: 0, cacheDir: false }) : undefined;
      try {
        const c = await NarrativeClassifier.load(join(NARRATIVES_MODEL_DIR, file), encoder);
        const [r] = await c.classify([REBUTTAL]);
        assert.deepEqual(r.codes, ["0_0"], `rebuttal P(narrative) ${r.narrative}`);
      } finally {
        await encoder?.close();
      }
    },
  );
}

/**
 * Accurate claims users saw given a narrative (issue 23). Each must carry none under the check rule (the product's);
 * the ones a shipped model still gets wrong stay todo, with its P(narrative) when last measured
 * (bench/narratives-errors.ts), so they report until they pass.
 */
const ACCURATE: readonly { text: string; todo: Partial<Record<string, string>> }[] = [
  {
    text: "Arctic summer sea ice extent has declined sharply since 1979",
    todo: { [FULL_MODEL_FILE]: "full.json: P(narrative) 0.59, 1_1" },
  },
  {
    text: "The Greenland ice sheet is losing ice and adding to sea level rise",
    todo: {},
  },
  {
    text: "Changes in solar activity cannot explain the warming since 1950",
    todo: {},
  },
  {
    text: "Sea level rise is accelerating",
    todo: {},
  },
  {
    text: "Nearly all climate scientists agree that humans are warming the planet",
    todo: {},
  },
];

for (const file of [FAST_MODEL_FILE, FULL_MODEL_FILE]) {
  test(`the shipped ${file} gives no narrative to accurate claims users reported`, async (t) => {
    const encoder = file === FULL_MODEL_FILE ? await openUseLite({ workers: 0, cacheDir: false }) : undefined;
    try {
      const c = await NarrativeClassifier.load(join(NARRATIVES_MODEL_DIR, file), encoder);
      const preds = await c.classify(ACCURATE.map((a) => a.text));
      for (const [i, a] of ACCURATE.entries()) {
        const todo = a.todo[file];
        await t.test(a.text, todo ? { todo: `issue 23: ${todo}` } : {}, () => {
          assert.deepEqual(preds[i].codes, ["0_0"], `P(narrative) ${preds[i].narrative}`);
        });
      }
    } finally {
      await encoder?.close();
    }
  });
}

test("the shipped models' classify rule names narratives from a threshold at most the check rule's", async () => {
  // Every model trained with the classify rule (fast.json at least; full.json once retrained) carries its threshold.
  for (const file of [FAST_MODEL_FILE, FULL_MODEL_FILE]) {
    const json = await readNarrativeModel(join(NARRATIVES_MODEL_DIR, file));
    if (file === FULL_MODEL_FILE && json.trainedOn.contrast === undefined) continue;
    const t = json.thresholds.classifyNarrative;
    assert.ok(t !== undefined && t > 0 && t <= NARRATIVE_THRESHOLD, `${file}: ${t}`);
  }
  // The same scores, both rules: a text between the two thresholds is 0_0 to check and coded to classify.
  const c = await NarrativeClassifier.load(join(NARRATIVES_MODEL_DIR, FAST_MODEL_FILE));
  const t = c.json.thresholds.classifyNarrative ?? NARRATIVE_THRESHOLD;
  if (t < NARRATIVE_THRESHOLD) {
    const texts = ["Climate policy is going to cost us", "The models might be a bit off on clouds", REBUTTAL];
    const check = await c.classify(texts, "check");
    const classify = await c.classify(texts, "classify");
    texts.forEach((_, i) => {
      assert.equal(check[i].narrative, classify[i].narrative);
      assert.equal(check[i].codes[0] === "0_0", check[i].narrative < NARRATIVE_THRESHOLD);
      assert.equal(classify[i].codes[0] === "0_0", classify[i].narrative < t);
    });
  }
});

test("the gate threshold is the one closest to meeting every allowance, the higher one on a near tie", () => {
  // Favor tweets score 0.2..0.6, Against 0.55..0.95: at 0.55 one Favor in five is flagged (0.2 / 0.10 = 2) and
  // none of the Against missed; at 0.6, 0.65 and 0.7 none flagged but one Against in five missed (0.2 / 0.15 =
  // 1.33); higher misses two. The three tie on the smallest worst ratio: the highest is taken.
  const cells = [...Array(5).fill("stance-favor"), ...Array(5).fill("stance-against")];
  const p = [0.2, 0.3, 0.4, 0.5, 0.59, 0.55, 0.7, 0.8, 0.9, 0.95];
  assert.equal(chooseGateThreshold(cells, p), 0.7);
  // A cell it is not chosen on (Climate-FEVER SUPPORTS claims) changes nothing; none present: 0.5.
  assert.equal(chooseGateThreshold([...cells, "cf-supports"], [...p, 0.99]), 0.7);
  assert.equal(chooseGateThreshold(["cf-supports"], [0.9]), 0.5);
  // 20 Favor (allowance 0.10), 100 Against (0.15). Up to 0.55 two Favor flagged (ratio 1.0, the smallest); at 0.6
  // one flagged, 15 Against missed (1.0): taken; at 0.65 none flagged, 16 missed (1.067, over 5% above): not.
  const favor = [0.62, 0.55, ...Array(18).fill(0.1)];
  const against = [0.45, ...Array(13).fill(0.4), 0.58, 0.62, ...Array(84).fill(0.9)];
  const many = [...Array(20).fill("stance-favor"), ...Array(100).fill("stance-against")];
  assert.equal(chooseGateThreshold(many, [...favor, ...against]), 0.6);
});

test("a second gate reader ships only when the worst ratio falls and no mainstream false-alarm share rises by > 0.01", () => {
  // 10 Favor tweets (mainstream), 10 Against (contrarian), 100 Climate-FEVER SUPPORTS claims (mainstream, not chosen on).
  const cells = [
    ...Array(10).fill("stance-favor"),
    ...Array(10).fill("stance-against"),
    ...Array(100).fill("cf-supports"),
  ];
  const gate = (favor: number, against: number, supports: number) =>
    cells.map((c, i) =>
      c === "stance-favor"
        ? i < favor
          ? 0.9
          : 0.1
        : c === "stance-against"
          ? i - 10 < against
            ? 0.9
            : 0.1
          : i - 20 < supports
            ? 0.9
            : 0.1,
    );
  // 2 of 10 Favor flagged (0.2 / 0.10 = 2), 8 of 10 Against found (0.2 / 0.15 = 1.33): worst 2.
  const linear = gate(2, 8, 30);
  assert.equal(gateWorstRatio(cells, linear, 0.5), 2);
  // 1 Favor flagged, 8 Against found: worst 1.33, better; SUPPORTS claims 0.30 -> 0.31 is within 0.01.
  assert.ok(Math.abs(gateWorstRatio(cells, gate(1, 8, 31), 0.5) - 0.2 / 0.15) < 1e-9);
  assert.equal(mlpPays(cells, linear, gate(1, 8, 31)), true);
  // The same but SUPPORTS claims rise to 0.32: not shipped. No gain in the worst ratio: not shipped.
  assert.equal(mlpPays(cells, linear, gate(1, 8, 32)), false);
  assert.equal(mlpPays(cells, linear, gate(2, 9, 30)), false);
  assert.equal(mlpPays(cells, linear, linear), false);
});

test("a data source joins the gate when the cell ratios fall worst first: a tie on the worst cell goes to the next", () => {
  // The worst falls: better, whatever the rest.
  assert.equal(leximinBetter([2.5, 2.0, 0.1], [2.7, 1.0, 0.1]), true);
  assert.equal(leximinBetter([2.7, 1.0, 0.1], [2.5, 2.0, 0.1]), false);
  // The worst ties (the same cell, FLICC misses, unchanged): the next worst decides, in any order of the cells.
  assert.equal(leximinBetter([0.9, 2.701, 1.6], [2.701, 1.9, 0.9]), true);
  assert.equal(leximinBetter([2.701, 1.9, 0.9], [0.9, 2.701, 1.6]), false);
  // All equal: no gain, so the source stays out.
  assert.equal(leximinBetter([2, 1], [1, 2]), false);
});

test("`train narratives --only full` follows the GWSD decision fast.json records; otherwise it is cross-validated", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cc-gwsd-"));
  assert.equal(await gwsdSetting(dir, "full"), "cv");
  const fast = (used: boolean) =>
    writeFileSync(
      join(dir, FAST_MODEL_FILE),
      JSON.stringify({ format: NARRATIVES_FORMAT, crossValidation: { gwsd: { used } } }),
    );
  fast(true);
  assert.equal(await gwsdSetting(dir, "full"), true);
  fast(false);
  assert.equal(await gwsdSetting(dir, "full"), false);
  // Training fast (alone or with full) cross-validates it afresh.
  assert.equal(await gwsdSetting(dir, "fast"), "cv");
  assert.equal(await gwsdSetting(dir), "cv");
});

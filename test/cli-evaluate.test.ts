import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { encoding: "utf8" });
const dir = mkdtempSync(join(tmpdir(), "cc-eval-"));

/** `evaluate --json` of the example run of a task against examples/labels.csv. */
function evaluateExample(task: 1 | 2) {
  const preds = `examples/task${task}-predictions.csv`;
  const r = cli(
    "evaluate",
    "--task",
    String(task),
    "--predictions",
    preds,
    "--gold",
    "examples/labels.csv",
    "--json",
  );
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test("evaluate --task 1 --json prints the official keys, computed on the example run", () => {
  const s = evaluateExample(1);
  for (const key of [
    "recall_at_2",
    "recall_at_5",
    "recall_at_10",
    "bpref",
    "score_1_1",
    "precision_weighted",
    "recall_weighted",
    "f1_weighted",
    "score_1_2",
  ]) {
    assert.equal(typeof s[key], "number", key);
  }
  // ex1: relevant A100 (rank 1) and A102 (rank 4, one NEI above): R@2 = 1/2; others 1 -> (0.5 + 3) / 4
  assert.equal(s.recall_at_2, 0.875);
  // Bpref: ex1 (1 + (1 - 1/2)) / 2 = 0.75, ex2 (1 - 1/1) = 0, ex3 1, ex4 1 -> 2.75 / 4
  assert.equal(s.bpref, 0.6875);
  assert.equal(s.score_1_1, (1 + 0.6875) / 2);
});

test("evaluate --task 2 --json prints macro, micro, weighted, exact match and the group object", () => {
  const s = evaluateExample(2);
  for (const key of [
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "micro_f1",
    "weighted_f1",
    "exact_match",
  ]) {
    assert.equal(typeof s[key], "number", key);
    assert.equal(typeof s.group[key], "number", `group.${key}`);
  }
  // Labels 0_0, 1_6, 3_3, 4_4, 5_1, 5_2: F1 1, 1, 1, 0, 0, 0 -> macro 0.5; exact: ex1 and ex3 of 4.
  assert.equal(s.macro_f1, 0.5);
  assert.equal(s.exact_match, 0.5);
  // Groups 0, 1, 3, 4, 5: ex2 5_2 is right group -> group F1 1, 1, 1, 0, 1 -> 0.8
  assert.equal(s.group.macro_f1, 0.8);
});

test("evaluate warns about unknown claims and fails with exit 2 on bad input", () => {
  const preds = join(dir, "p.csv");
  writeFileSync(preds, "claim_id,narrative\nex1,1_6\nnobody,2_1\n");
  const ok = cli("evaluate", "--task", "2", "--predictions", preds, "--gold", "examples/labels.csv");
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stderr, /warning: .*p\.csv: 1 predicted claim\(s\) not in the gold, ignored: nobody/);
  assert.match(ok.stdout, /Macro/i);

  const bad = join(dir, "bad.csv");
  writeFileSync(bad, "claim_id,abstract_id,rank\nex1,A100,first\n");
  const r = cli("evaluate", "--task", "1", "--predictions", bad, "--gold", "examples/labels.csv");
  assert.equal(r.status, 2);
  assert.equal(
    r.stderr.trim(),
    `climatecheck: ${bad}, line 2, field "rank": rank must be a whole number from 1, got "first"`,
  );

  const usage = cli("evaluate", "--task", "3", "--predictions", bad, "--gold", bad);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /must be 1 or 2/);
});

test("evaluate says a claim missing from the gold once (stderr), not again in the report", () => {
  const preds = join(dir, "p1.csv");
  writeFileSync(preds, "claim_id,abstract_id,rank,label\nex1,A100,1,Refutes\nnobody,A1,1,Supports\n");
  const r = cli("evaluate", "--task", "1", "--predictions", preds, "--gold", "examples/labels.csv");
  assert.equal(r.status, 0, r.stderr);
  assert.equal(`${r.stdout}${r.stderr}`.match(/not in the gold/g)?.length, 1);
});

test("evaluate stops with exit 2, naming both files, when no predicted claim is in the gold", () => {
  for (const [task, rows] of [
    [1, "claim_id,abstract_id,rank,label\nother1,A100,1,Refutes\nother2,A1,1,Supports\n"],
    [2, "claim_id,narrative\nother1,1_6\n"],
  ] as const) {
    const preds = join(dir, `none${task}.csv`);
    writeFileSync(preds, rows);
    const html = join(dir, `none${task}.html`);
    const r = cli(
      "evaluate",
      "--task",
      String(task),
      "--predictions",
      preds,
      "--gold",
      "examples/labels.csv",
      "--html",
      html,
    );
    assert.equal(r.status, 2, r.stdout);
    assert.equal(r.stdout, "", "no table of zeros");
    assert.match(
      r.stderr.trim(),
      new RegExp(
        `^climatecheck: ${preds.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: no predicted claim is in the gold file examples/labels\\.csv \\(${task === 1 ? 2 : 1} claim id\\(s\\), e\\.g\\. other1`,
      ),
    );
    assert.equal(r.stderr.trim().split("\n").length, 1, "one line");
    assert.equal(existsSync(html), false, "no report of zeros either");
  }
});

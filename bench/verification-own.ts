/**
 * The verifier on our own judged dev pairs (data/judged, dev claims: claims as people post them, pairs on the
 * built-in corpus), the model before issue 22 beside the shipped one (trained with our own pairs too), with
 * bootstrap 95% intervals over claims; and both on the SciFact and Climate-FEVER dev pairs (the guard: the shipped
 * model must not fall more than 0.01 below). Evaluation only; the test split is never read.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Label } from "../src/types.ts";
import { trainBaseline } from "../src/verification/baseline.ts";
import { loadVerificationModel } from "../src/verification/builtin.ts";
import type { Source } from "../src/verification/examples.ts";
import { VerificationModel } from "../src/verification/model.ts";
import { judgedFigures, showInterval } from "../src/verification/own-dev.ts";
import { evaluateModel, loadVerificationData } from "../src/verification/train.ts";
import { BEFORE } from "./judged.ts";
import { type Bench, table } from "./report.ts";

const f3 = (x: number | undefined) => (x === undefined ? "-" : x.toFixed(3));
const log = (m: string) => process.stderr.write(`  ${new Date().toISOString().slice(11, 19)} ${m}\n`);
const noEncoder = async (): Promise<Float32Array[]> => {
  throw new Error("these verifier models need no sentence encoder");
};

function modelBefore(): string {
  const out = join(mkdtempSync(join(tmpdir(), "cc-verifier-before-")), "model.json");
  writeFileSync(
    out,
    execFileSync("git", ["show", `${BEFORE}:models/verification/model.json`], { maxBuffer: 1 << 28 }),
  );
  return out;
}

export const bench: Bench = async () => {
  const { train, dev } = await loadVerificationData();
  const shipped = await loadVerificationModel();
  const { builtinPair, ...withoutBuiltin } = shipped.json;
  const systems = [
    { name: `before issue 22 (${BEFORE})`, model: await loadVerificationModel(modelBefore()) },
    ...(builtinPair
      ? [
          {
            name: "shipped without its built-in corpus model (the verifier retrained as it was)",
            model: new VerificationModel(withoutBuiltin),
            judgedOnly: true,
          },
        ]
      : []),
    { name: "shipped", model: shipped },
  ];
  const own = dev.filter((e) => e.source === "own");
  const judgedRows: (string | number)[][] = [];
  const guardRows: (string | number)[][] = [];
  const judgedRow = (name: string, labels: Label[]) => {
    const f = judgedFigures(own, labels);
    judgedRows.push([
      name,
      showInterval(f.weightedF1),
      showInterval(f.f1.Supports),
      showInterval(f.f1.Refutes),
      showInterval(f.f1["Not Enough Information"]),
      f.decisive,
      showInterval(f.otherwise),
      showInterval(f.opposite),
    ]);
  };
  // The plain verifier of the judged benchmark: TF-IDF LR on our own train pairs.
  const plain = trainBaseline(train.filter((e) => e.source === "own"));
  judgedRow(
    "plain: TF-IDF LR on our own train pairs",
    plain.predict(own).map((v) => v.label),
  );
  for (const s of systems) {
    log(s.name);
    const r = await evaluateModel(s.model, own, noEncoder);
    judgedRow(
      s.name,
      r.verdicts.map((v) => v.label),
    );
    if ("judgedOnly" in s) continue;
    for (const source of ["scifact", "climate-fever"] as Source[]) {
      const examples = dev.filter((e) => e.source === source);
      const g = await evaluateModel(s.model, examples, noEncoder);
      guardRows.push([
        s.name,
        source,
        examples.length,
        f3(g.scores.f1_weighted),
        f3(g.scores.per_label.Supports?.f1),
        f3(g.scores.per_label.Refutes?.f1),
        f3(g.neiAsSupports),
      ]);
    }
  }
  const claims = new Set(own.map((e) => e.claimId)).size;
  const gold = (l: string) => own.filter((e) => e.label === l).length;
  return {
    id: "verification-own",
    title: "Claim verification: our own judged dev pairs",
    command: "npm run bench -- verification-own",
    markdown: `The plain verifier of the judged benchmark (TF-IDF LR on our own train pairs), the verifier before issue 22
and the shipped one (trained on SciFact, Climate-FEVER and our own pairs: judged pairs of the judged set's train
claims and the claims written from abstracts, own weight chosen by cross-validation on train, and, when
cross-validation chose one, a pair model of its own for the built-in corpus's abstracts; models/verification/CARD.md)
on the judged set's dev claims: ${own.length} pairs of ${claims} claims as
people post them, each judged by reading the abstract (${gold("Supports")} Supports, ${gold("Refutes")} Refutes,
${gold("Not Enough Information")} NEI). Pair labels as the verifier gives them (no relevance gate, no summary);
bootstrap 95% intervals over claims (1,000 resamples). "Judged otherwise": of the Supports/Refutes labels given, the
share judged another label; "opposite": judged the other direction.

${table(
  [
    "verifier",
    "weighted F1",
    "Supports F1",
    "Refutes F1",
    "NEI F1",
    "Supports/Refutes given",
    "judged otherwise",
    "judged opposite",
  ],
  judgedRows,
)}

SciFact and Climate-FEVER dev pairs (the guard: the shipped model at most 0.01 below the one before):

${table(["verifier", "dev set", "pairs", "weighted F1", "Supports F1", "Refutes F1", "gold NEI → Supports"], guardRows)}
`,
  };
};

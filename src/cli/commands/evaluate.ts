/** `climatecheck evaluate`: scores prediction files with the official ClimateCheck 2026 metrics. */
import { type Command, InvalidArgumentError, Option } from "commander";
import {
  readTask1Gold,
  readTask1Predictions,
  readTask2Gold,
  readTask2Predictions,
} from "../../data/climatecheck.ts";
import { DataError } from "../../data/errors.ts";
import { writeFileAtomic } from "../../data/tables.ts";
import { htmlReport } from "../../evaluation/html-report.ts";
import { scoreNarratives, scoreTask1, scoreTask1ByGroup } from "../../evaluation/metrics.ts";
import { formatNarrativeReport, formatTask1GroupReport, formatTask1Report } from "../../evaluation/report.ts";
import { addEv2rOptions, type Ev2rFlags, evaluateEv2r } from "./evaluate-ev2r.ts";

export interface EvaluateOptions extends Ev2rFlags {
  task: 1 | 2;
  predictions: string;
  gold: string;
  json?: boolean;
  narratives?: string;
  /** Also write a self-contained HTML report with figures to this file. */
  html?: string;
}

/**
 * Scores of predictions none of whose claims is in the gold are all zeros and mean nothing (a wrong file, or ids
 * from another split): a bad-input error, not a result.
 */
function requireOverlap(o: EvaluateOptions, predicted: Iterable<string>, unknown: readonly string[]): void {
  const ids = new Set(predicted);
  if (ids.size === 0 || unknown.length < ids.size) return;
  const shown = [...ids].slice(0, 3).join(", ");
  throw new DataError(
    o.predictions,
    `no predicted claim is in the gold file ${o.gold} (${ids.size} claim id(s), e.g. ${shown}): nothing to score; check that both files are of the same split`,
  );
}

/** Scores a prediction file against a gold file; returns the printed text and the warnings. */
export async function evaluateFiles(
  o: EvaluateOptions,
): Promise<{ result: object; text: string; warnings: string[]; notes?: string[] }> {
  if (o.task === 1) {
    const [preds, gold] = await Promise.all([readTask1Predictions(o.predictions), readTask1Gold(o.gold)]);
    const scores = scoreTask1(preds, gold);
    requireOverlap(
      o,
      preds.map((p) => p.claimId),
      scores.unknown_claims,
    );
    const byGroup = o.narratives
      ? scoreTask1ByGroup(preds, gold, await readTask2Gold(o.narratives))
      : undefined;
    const result = byGroup ? { ...scores, by_group: byGroup } : scores;
    if (o.html)
      await writeFileAtomic(
        o.html,
        htmlReport({ task: 1, scores, byGroup, narratives: o.narratives, ...reportSource(o) }),
      );
    const text = byGroup
      ? `${formatTask1Report(scores)}\n\n${formatTask1GroupReport(byGroup)}`
      : formatTask1Report(scores);
    const warnings = unknownClaimsWarning(o.predictions, scores.unknown_claims);
    if (!o.ev2r) return { result, text, warnings };
    const ev2r = await evaluateEv2r(o, preds, gold);
    return {
      result: { ...result, ...ev2r.scores },
      text: `${text}\n\n${ev2r.text}`,
      warnings,
      notes: ev2r.notes,
    };
  }
  if (o.ev2r) throw new DataError("--ev2r", "applies to task 1 only");
  const [preds, gold] = await Promise.all([readTask2Predictions(o.predictions), readTask2Gold(o.gold)]);
  const scores = scoreNarratives(preds, gold);
  requireOverlap(
    o,
    preds.map((p) => p.claimId),
    scores.unknown_claims,
  );
  if (o.html) await writeFileAtomic(o.html, htmlReport({ task: 2, scores, ...reportSource(o) }));
  return {
    result: scores,
    text: formatNarrativeReport(scores),
    warnings: unknownClaimsWarning(o.predictions, scores.unknown_claims),
  };
}

const reportSource = (o: EvaluateOptions) => ({
  predictions: o.predictions,
  gold: o.gold,
  created: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
});

function unknownClaimsWarning(file: string, ids: string[]): string[] {
  if (ids.length === 0) return [];
  const shown = ids.slice(0, 5).join(", ");
  return [
    `${file}: ${ids.length} predicted claim(s) not in the gold, ignored: ${shown}${ids.length > 5 ? ", ..." : ""}`,
  ];
}

function parseTask(value: string): 1 | 2 {
  if (value !== "1" && value !== "2") throw new InvalidArgumentError("must be 1 or 2.");
  return Number(value) as 1 | 2;
}

export function register(program: Command): void {
  const command = program
    .command("evaluate")
    .description(
      "Score predictions with the official ClimateCheck 2026 metrics (task 1: retrieval + verification; task 2: narratives)",
    )
    .addOption(new Option("--task <n>", "1 or 2").argParser(parseTask).makeOptionMandatory())
    .requiredOption(
      "--predictions <file>",
      "prediction file (task 1: claim_id,abstract_id,rank[,label]; task 2: claim_id,narrative)",
    )
    .requiredOption("--gold <file>", "gold file (the ClimateCheck labels layout)")
    .option(
      "--narratives <file>",
      "task 1: also break the scores down by the gold narrative group of each claim",
    )
    .option("--json", "print one JSON object instead of tables")
    .option(
      "--html <file>",
      "also write a self-contained HTML report with figures (confusion matrix, per-label F1, per-group recall)",
    );
  addEv2rOptions(command).action(async (opts: EvaluateOptions) => {
    const { result, text, warnings, notes = [] } = await evaluateFiles(opts);
    for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
    for (const n of notes) process.stderr.write(`${n}\n`);
    process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${text}\n`);
  });
}

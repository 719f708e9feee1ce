/** `climatecheck evaluate`: scores prediction files with the official ClimateCheck 2026 metrics. */
import { type Command, InvalidArgumentError, Option } from "commander";
import {
  readTask1Gold,
  readTask1Predictions,
  readTask2Gold,
  readTask2Predictions,
} from "../../data/climatecheck.ts";
import { DataError } from "../../data/errors.ts";
import { scoreNarratives, scoreTask1, scoreTask1ByGroup } from "../../evaluation/metrics.ts";
import { formatNarrativeReport, formatTask1GroupReport, formatTask1Report } from "../../evaluation/report.ts";
import { addEv2rOptions, type Ev2rFlags, evaluateEv2r } from "./evaluate-ev2r.ts";

export interface EvaluateOptions extends Ev2rFlags {
  task: 1 | 2;
  predictions: string;
  gold: string;
  json?: boolean;
  narratives?: string;
}

/** Scores a prediction file against a gold file; returns the printed text and the warnings. */
export async function evaluateFiles(
  o: EvaluateOptions,
): Promise<{ result: object; text: string; warnings: string[]; notes?: string[] }> {
  if (o.task === 1) {
    const [preds, gold] = await Promise.all([readTask1Predictions(o.predictions), readTask1Gold(o.gold)]);
    const scores = scoreTask1(preds, gold);
    const byGroup = o.narratives
      ? scoreTask1ByGroup(preds, gold, await readTask2Gold(o.narratives))
      : undefined;
    const result = byGroup ? { ...scores, by_group: byGroup } : scores;
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
  return {
    result: scores,
    text: formatNarrativeReport(scores),
    warnings: unknownClaimsWarning(o.predictions, scores.unknown_claims),
  };
}

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
    .option("--json", "print one JSON object instead of tables");
  addEv2rOptions(command).action(async (opts: EvaluateOptions) => {
    const { result, text, warnings, notes = [] } = await evaluateFiles(opts);
    for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
    for (const n of notes) process.stderr.write(`${n}\n`);
    process.stdout.write(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${text}\n`);
  });
}

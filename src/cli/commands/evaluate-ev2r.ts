/**
 * The `--ev2r` part of `climatecheck evaluate`: its flags, and the run that loads claim and abstract texts, opens
 * the proxy verifier and the (cached) judge, scores the unannotated pairs with a progress bar and writes the
 * audit file. Kept out of evaluate.ts so that command stays the official scorer.
 */
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { readClaims } from "../../data/climatecheck.ts";
import { DataError } from "../../data/errors.ts";
import { writeCsv } from "../../data/tables.ts";
import { loadAbstractTexts } from "../../evaluation/abstract-texts.ts";
import { type Ev2rScores, type Judge, neededAbstracts, planEv2r, scoreEv2r } from "../../evaluation/ev2r.ts";
import { DETAILS_HEADER, detailsRow, formatEv2rReport } from "../../evaluation/ev2r-report.ts";
import { builtinJudge } from "../../evaluation/judges/builtin.ts";
import { cachedJudge } from "../../evaluation/judges/cache.ts";
import { llmJudge, readLlmJudgeConfig } from "../../evaluation/judges/llm.ts";
import type { LabelledPair, Task1Prediction } from "../../types.ts";
import { openVerifier, resolveVerifierConfig } from "../../verification/config.ts";
import type { Verifier } from "../../verification/verifier.ts";
import { addVerifierOptions, type VerifierFlags } from "../verifier-options.ts";

export const JUDGES = ["builtin", "llm"] as const;

export interface Ev2rFlags extends VerifierFlags {
  ev2r?: boolean;
  index?: string;
  corpus?: string;
  judge?: string;
  judgeConfig?: string;
  details?: string;
}

export function addEv2rOptions(cmd: Command): Command {
  const withEv2r = cmd
    .option(
      "--ev2r",
      "task 1: also score retrieved abstracts outside the gold (adapted Ev2R, auto-verification)",
    )
    .option("--index <dir>", "--ev2r: index holding the abstract texts")
    .option("--corpus <file>", "--ev2r: corpus file holding the abstract texts (instead of --index)")
    .option("--judge <name>", `--ev2r: atomic-fact judge (${JUDGES.join(", ")})`, "builtin")
    .option(
      "--judge-config <file>",
      '--ev2r --judge llm: chat endpoint settings (JSON, or its "judge" section)',
    )
    .option("--details <file>", "--ev2r: write one audit row per unannotated pair (CSV)");
  return addVerifierOptions(withEv2r, "--ev2r proxy: ");
}

/** Checks the judge flags before anything slow runs; returns how to open the judge once the verifier is open. */
async function judgeOpener(o: Ev2rFlags): Promise<(verifier: Verifier) => Judge> {
  if (o.judge === "builtin") return (verifier) => builtinJudge(verifier);
  if (o.judge === "llm") {
    if (!o.judgeConfig)
      throw new DataError(
        "--judge-config",
        "--judge llm needs the chat endpoint settings (--judge-config FILE)",
      );
    const options = await readLlmJudgeConfig(o.judgeConfig);
    return () => llmJudge(options);
  }
  throw new DataError("--judge", `unknown judge "${o.judge}" (expected ${JUDGES.join(", ")})`);
}

/** Ev2R of a task 1 run: the scores, their text report, and lines for stderr. */
export async function evaluateEv2r(
  o: Ev2rFlags & { predictions: string; gold: string },
  preds: readonly Task1Prediction[],
  gold: readonly LabelledPair[],
): Promise<{ scores: Ev2rScores; text: string; notes: string[] }> {
  if ((o.index === undefined) === (o.corpus === undefined))
    throw new DataError(
      "--ev2r",
      "needs the abstract texts: give exactly one of --index DIR or --corpus FILE",
    );
  const openJudge = await judgeOpener(o);
  const verifierConfig = await resolveVerifierConfig(o);
  let claimList: Awaited<ReturnType<typeof readClaims>>;
  try {
    claimList = await readClaims(o.gold);
  } catch (e) {
    if (e instanceof DataError && e.field === "claim")
      throw new DataError(
        o.gold,
        `${e.message.split(": ").slice(1).join(": ")}; --ev2r needs the claim texts`,
        {
          line: e.line,
          field: "claim",
        },
      );
    throw e;
  }
  const plan = planEv2r(gold, preds);
  const ids = neededAbstracts(plan.claims);
  const source = o.index !== undefined ? { index: o.index } : { corpus: o.corpus as string };
  const texts = await loadAbstractTexts(ids, source);
  const where = o.index ?? o.corpus;
  const goldIds = new Set(gold.map((g) => g.abstractId));
  for (const id of ids) {
    if (texts.has(id)) continue;
    const file = goldIds.has(id) ? o.gold : o.predictions;
    throw new DataError(file, `abstract "${id}" is not in ${where}, so --ev2r cannot read its text`, {
      field: "abstract_id",
    });
  }

  const verifier = await openVerifier(verifierConfig);
  try {
    const judge = cachedJudge(openJudge(verifier));
    const total = plan.claims.reduce((s, c) => s + c.unannotated.length, 0);
    const bar =
      process.stderr.isTTY === true && total > 0
        ? new cliProgress.SingleBar(
            {
              format: "ev2r |{bar}| {value}/{total} pairs · ETA {eta_formatted}",
              stream: process.stderr,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
    bar?.start(total, 0);
    const started = Date.now();
    let result: Awaited<ReturnType<typeof scoreEv2r>>;
    try {
      result = await scoreEv2r({
        claims: new Map(claimList.map((c) => [c.id, c.text])),
        gold,
        predictions: preds,
        abstracts: texts,
        judge,
        verifier,
        onProgress: (done) => bar?.update(done),
      });
    } finally {
      bar?.stop();
    }
    if (o.details) await writeCsv(o.details, DETAILS_HEADER, result.pairs.map(detailsRow));
    const notes = [
      `ev2r: ${result.pairs.length} pairs in ${((Date.now() - started) / 1000).toFixed(1)} s; judge answers: ${judge.stats.hits} cached, ${judge.stats.misses} new`,
    ];
    if (o.details) notes.push(`ev2r: wrote ${result.pairs.length} audit rows to ${o.details}`);
    return { scores: result.scores, text: formatEv2rReport(result.scores), notes };
  } finally {
    await verifier.close();
  }
}

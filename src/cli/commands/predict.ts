/** `climatecheck predict --task N`: the shared task's entry point; one line per task in TASKS. */
import { type Command, InvalidArgumentError } from "commander";
import { readNarrativesConfig } from "../../narratives/config.ts";
import { BatchInterrupted } from "../../pipeline/batch.ts";
import { DEFAULT_K, type PredictBatchSummary, predictBatch } from "../../pipeline/batch-predict.ts";
import { progressBar } from "../../pipeline/batch-progress.ts";
import { readRetrievalConfig } from "../../retrieval/byo.ts";
import { resolveVerifierConfig } from "../../verification/config.ts";
import { indexWithProgress } from "../index-progress.ts";
import { addVerifierOptions, type VerifierFlags } from "../verifier-options.ts";

export interface PredictOptions extends VerifierFlags {
  task: number;
  claims: string;
  out: string;
  fast?: boolean;
  index?: string;
  k: number;
  zip?: boolean;
  workers?: number;
  chunkSize?: number;
  signal?: AbortSignal;
}

/** Task number -> runner. Both go through the resumable batch (src/pipeline/batch-predict.ts). */
export const TASKS: Record<number, (o: PredictOptions) => Promise<string>> = {
  1: async (o) => {
    const verifier = await resolveVerifierConfig(o);
    const retrieval = await readRetrievalConfig(o.config);
    const bar = progressBar("predict task 1");
    try {
      const s = await predictBatch({
        task: 1,
        claims: o.claims,
        out: o.out,
        index: await indexWithProgress(o.index, retrieval),
        k: o.k,
        verifier,
        retrieval,
        zip: o.zip,
        workers: o.workers,
        chunkSize: o.chunkSize,
        signal: o.signal,
        onProgress: bar.update,
        onSkip: (m) => process.stderr.write(`skipped: ${m}\n`),
      });
      bar.stop();
      return summary(s, `${s.rows} rows (top ${o.k}, verified)`, o.out);
    } finally {
      bar.stop();
    }
  },
  2: async (o) => {
    const narratives = await readNarrativesConfig(o.config);
    const bar = progressBar("predict task 2");
    try {
      const s = await predictBatch({
        task: 2,
        claims: o.claims,
        out: o.out,
        fast: o.fast,
        narratives,
        zip: o.zip,
        workers: o.workers,
        chunkSize: o.chunkSize,
        signal: o.signal,
        onProgress: bar.update,
      });
      bar.stop();
      return summary(s, "narratives", o.out);
    } finally {
      bar.stop();
    }
  },
};

function summary(s: PredictBatchSummary, what: string, out: string): string {
  const rate = s.processed / Math.max(s.seconds, 1e-3);
  const parts = [`wrote ${what} for ${s.total} claims to ${out}`];
  if (s.resumed) parts.push(`${s.resumed} resumed from the checkpoint`);
  if (s.processed) parts.push(`${rate.toFixed(1)} claims/s`);
  if (s.skipped) parts.push(`${s.skipped} claims skipped`);
  if (s.zip) parts.push(`submission ${s.zip}`);
  return parts.join("; ");
}

/** A commander parser for a whole-number flag in [min, max]. */
export const wholeNumber = (name: string, min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}`);
  return n;
};

/** A commander parser for `--task`: a task that has a predictor. */
export function taskNumber(v: string): number {
  const n = Number(v);
  if (!(n in TASKS))
    throw new InvalidArgumentError(
      `no predictor for task ${v} (available: ${Object.keys(TASKS).join(", ")})`,
    );
  return n;
}

export function register(program: Command): void {
  addVerifierOptions(program.command("predict"), "task 1: ")
    .description(
      "Write a ClimateCheck 2026 submission file for a task; resumes an interrupted run from OUT.partial.jsonl",
    )
    .requiredOption("--task <n>", `task number (${Object.keys(TASKS).join(", ")})`, taskNumber)
    .requiredOption("--claims <file>", "claims file (claim_id, claim)")
    .requiredOption("--out <file>", "predictions file to write (CSV)")
    .option("--index <dir>", "task 1: index directory (default: the default index, built on first use)")
    .option("--k <n>", "task 1: abstracts per claim", wholeNumber("--k", 1, 1000), DEFAULT_K)
    .option("--fast", "task 2: without the sentence encoder")
    .option("--zip", "also write predictions.zip (predictions.csv inside, CodaBench format) beside OUT")
    .option(
      "--workers <n>",
      "worker threads, each with its own models (0 = this thread)",
      wholeNumber("--workers", 0, 16),
    )
    .option(
      "--chunk-size <n>",
      "claims per step; each finished step is saved to the checkpoint",
      wholeNumber("--chunk-size", 1, 10000),
    )
    .action(async (opts: PredictOptions) => {
      // Ctrl-C: finish the claims in progress, keep them in the checkpoint, exit; a second Ctrl-C exits at once.
      const abort = new AbortController();
      const onSigint = () => {
        if (abort.signal.aborted) process.exit(130);
        process.stderr.write("\nstopping after the claims in progress (Ctrl-C again to quit now)\n");
        abort.abort();
      };
      process.on("SIGINT", onSigint);
      try {
        process.stderr.write(`${await TASKS[opts.task]({ ...opts, signal: abort.signal })}\n`);
      } catch (e) {
        if (!(e instanceof BatchInterrupted)) throw e;
        process.stderr.write(`climatecheck: ${e.message}\n`);
        process.exitCode = 130;
      } finally {
        process.off("SIGINT", onSigint);
      }
    });
}

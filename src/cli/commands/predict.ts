/** `climatecheck predict --task N`: the shared task's entry point; one line per task in TASKS. */
import { type Command, InvalidArgumentError } from "commander";
import { classifyClaimsFile } from "./classify.ts";

export interface PredictOptions {
  task: number;
  claims: string;
  out: string;
  fast?: boolean;
}

/** Task number -> runner. Task 2 is `classify`; task 1 runners register here when they exist. */
export const TASKS: Record<number, (o: PredictOptions) => Promise<string>> = {
  2: async (o) => {
    const r = await classifyClaimsFile({ claims: o.claims, out: o.out, fast: o.fast });
    return `classified ${r.claims} claims (${r.perSecond.toFixed(0)} claims/s) to ${o.out}`;
  },
};

export function register(program: Command): void {
  program
    .command("predict")
    .description("Write a ClimateCheck 2026 submission file for a task")
    .requiredOption("--task <n>", `task number (${Object.keys(TASKS).join(", ")})`, (v) => {
      const n = Number(v);
      if (!(n in TASKS))
        throw new InvalidArgumentError(
          `no predictor for task ${v} (available: ${Object.keys(TASKS).join(", ")})`,
        );
      return n;
    })
    .requiredOption("--claims <file>", "claims file (claim_id, claim)")
    .requiredOption("--out <file>", "predictions file to write (CSV)")
    .option("--fast", "task 2: without the sentence encoder")
    .action(async (opts: PredictOptions) => {
      process.stderr.write(`${await TASKS[opts.task](opts)}\n`);
    });
}

/**
 * The `climatecheck-train <what>` program: trains the shipped models from ../shared/data and data/. One line per
 * trainer in TRAINERS. A command of its own, so that the trainers depend on the runtime (the CLI's runner, the
 * encoders) and `climatecheck` never imports training code.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { PACKAGE_ROOT } from "../data/paths.ts";
import { openUseLite } from "../encoders/sentence-encoder.ts";

interface TrainCommandOptions {
  /** Training data folder (default: $CLIMATECHECK_DATA or ../shared/data). */
  data?: string;
  /** A ClimateCheck training file, for the trainers that use one. */
  climatecheck?: string;
  /** Output folder (default: the trainer's folder under models/). */
  out?: string;
  /** Train one variant only (narratives: fast | full). */
  only?: string;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);

/**
 * Name -> trainer, in the order `all` runs them (scope, then topics, before relevance, which reads both). Add yours
 * with one line. Each loads its trainer when run, so training one model loads only its own code.
 */
const TRAINERS: Record<string, (o: TrainCommandOptions) => Promise<void>> = {
  narratives: async (o) =>
    (await import("../narratives/build.ts")).buildNarrativeModels({
      dataDir: o.data,
      climatecheckTrain: o.climatecheck,
      outDir: o.out,
      only: o.only === undefined ? undefined : narrativeVariant(o.only),
      openEncoder: () => openUseLite(),
      log,
    }),
  verification: async (o) =>
    (await import("../verification/build.ts")).buildVerificationModel({
      dataDir: o.data,
      outDir: o.out,
      log,
    }),
  retrieval: async (o) => {
    await (await import("../retrieval/train.ts")).trainRetrieval({ dataDir: o.data, outDir: o.out, log });
  },
  scope: async (o) => {
    await (await import("../scope/build.ts")).buildScopeModel({ dataDir: o.data, outDir: o.out, log });
  },
  topics: async (o) => {
    await (await import("../verification/build-topics.ts")).buildTopicModel({ outDir: o.out, log });
  },
  relevance: async (o) => {
    await (await import("../verification/build-relevance.ts")).buildRelevanceGate({
      outDir: o.out,
      log,
    });
  },
  ranking: async (o) => {
    await (await import("../retrieval/train-judged.ts")).trainJudgedRanking({ outDir: o.out, log });
  },
};

function narrativeVariant(v: string): "fast" | "full" {
  if (v !== "fast" && v !== "full")
    throw new InvalidArgumentError(`--only: expected fast or full, got "${v}"`);
  return v;
}

const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
  version: string;
};

/** The `climatecheck-train` program (its --help is what docs/cli.md's examples are checked against). */
export function trainProgram(): Command {
  return new Command()
    .name("climatecheck-train")
    .description("Train shipped models from the training data (deterministic)")
    .version(version, "-V, --version", "print the version")
    .argument("<what>", `one of ${[...Object.keys(TRAINERS), "all"].join(", ")}`)
    .option("--data <dir>", "training data folder (default: $CLIMATECHECK_DATA or ../shared/data)")
    .option("--climatecheck <file>", "ClimateCheck training file (claim_id, claim, narrative) to add")
    .option("--out <dir>", "output folder (default: models/<what>)")
    .option("--only <variant>", "train one variant only (narratives: fast, full)")
    .action(async (what: string, opts: TrainCommandOptions, cmd: Command) => {
      const names = what === "all" ? Object.keys(TRAINERS) : [what];
      for (const n of names)
        if (!(n in TRAINERS))
          cmd.error(`unknown model "${n}" (known: ${Object.keys(TRAINERS).join(", ")}, all)`);
      if (what === "all" && opts.out) cmd.error("--out applies to one model at a time");
      try {
        for (const n of names) await TRAINERS[n](opts);
      } catch (e) {
        if (e instanceof InvalidArgumentError) cmd.error(e.message);
        throw e;
      }
    });
}

/** `climatecheck retrieve`: task 1 predictions (ranked abstracts, no labels) for a claims file. */
import type { Command } from "commander";
import { readClaims, writeTask1Predictions } from "../../data/climatecheck.ts";
import { DataError } from "../../data/errors.ts";
import { readRetrievalConfig } from "../../retrieval/byo.ts";
import { openRetriever } from "../../retrieval/load.ts";
import { checkClaim } from "../../retrieval/retriever.ts";
import type { Claim } from "../../types.ts";
import { indexWithProgress } from "../index-progress.ts";
import { addProfileOption } from "../profile-option.ts";

export function register(program: Command): void {
  addProfileOption(program.command("retrieve"))
    .description("Rank abstracts for each claim (task 1.1) and write task 1 predictions")
    .requiredOption("--claims <file>", "claims file (claim_id, claim)")
    .option("--index <dir>", "index directory (default: the default index, built on first use)")
    .requiredOption("--out <file>", "predictions CSV to write")
    .option("--k <n>", "abstracts per claim", "10")
    .option("--model <file>", "re-ranker model (default: the shipped one)")
    .option("--no-rerank", "stage 1 only (BM25 + dense fusion)")
    .option("--config <file>", "profile: its retrieval section's own ONNX models (see docs/byo-models.md)")
    .action(
      async (
        opts: {
          claims: string;
          index?: string;
          out: string;
          k: string;
          model?: string;
          rerank: boolean;
          config?: string;
        },
        cmd: Command,
      ) => {
        const k = Number(opts.k);
        if (!Number.isInteger(k) || k < 1 || k > 1000) cmd.error("--k must be a whole number from 1 to 1000");
        const retrieval = await readRetrievalConfig(opts.config);
        const claims = await readClaims(opts.claims);
        const ok: Claim[] = [];
        for (const c of claims) {
          try {
            checkClaim(c.text, `${opts.claims}, claim ${c.id}`);
            ok.push(c);
          } catch (e) {
            if (!(e instanceof DataError)) throw e;
            process.stderr.write(`skipped: ${e.message}\n`);
          }
        }
        if (ok.length === 0) throw new DataError(opts.claims, "no claim can be searched");
        const { retriever, close } = await openRetriever(await indexWithProgress(opts.index, retrieval), {
          model: opts.rerank ? opts.model : null,
          retrieval,
        });
        try {
          const preds = await retriever.retrieveAll(ok, k);
          await writeTask1Predictions(opts.out, preds);
          const how =
            retrieval.backend !== "builtin"
              ? retriever.description
              : retriever.reranker
                ? "re-ranked"
                : retriever.vectorSets.length
                  ? "fused"
                  : "BM25";
          process.stderr.write(
            `wrote ${preds.length} predictions for ${ok.length} claims (${how}) to ${opts.out}${ok.length < claims.length ? `; ${claims.length - ok.length} claims skipped` : ""}\n`,
          );
        } finally {
          await close();
        }
      },
    );
}

/** `climatecheck ingest CORPUS`: builds or extends (resumably) the retrieval index. */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { BUILTIN_CORPUS, isBuiltinOnly } from "../../data/builtin-corpus.ts";
import type { CorpusFormat } from "../../data/climatecheck.ts";
import { countLines } from "../../index/count-lines.ts";
import { ingest } from "../../index/ingest.ts";
import { FILES, readManifest } from "../../index/schema.ts";
import { defaultIndexDir } from "../../pipeline/default-index.ts";
import { openByoRetrieval, readRetrievalConfig } from "../../retrieval/byo.ts";
import { openEncoders } from "../../retrieval/encoders.ts";
import { ingestReporter } from "../index-progress.ts";
import { addProfileOption } from "../profile-option.ts";

/** Another corpus ingested into an index that holds only the built-in demo corpus replaces it (not mixed in). */
async function replaceBuiltin(index: string, corpus: string): Promise<void> {
  if (!existsSync(corpus) || resolve(corpus) === BUILTIN_CORPUS.path) return;
  if (!existsSync(join(index, FILES.manifest))) return;
  if (!isBuiltinOnly(readManifest(index).sources)) return;
  process.stderr.write(`${index} holds the built-in demo corpus; replacing it with ${corpus}\n`);
  await rm(index, { recursive: true, force: true });
}

export function register(program: Command): void {
  addProfileOption(program.command("ingest"))
    .description("Index a corpus (BM25 over title and abstract, dense vectors); resumes an interrupted run")
    .argument("<corpus>", "corpus file (.parquet, .jsonl, .csv, optionally .gz)")
    .option(
      "--index <dir>",
      "index directory (default: the default index that check, serve and predict use)",
      defaultIndexDir(),
    )
    .option("--format <format>", "auto | climatecheck | scifact | climate-fever", "auto")
    .option("--no-vectors", "no built-in dense vectors (BM25 only, unless --config adds a dense model)")
    .option(
      "--config <file>",
      "profile whose retrieval.dense model also embeds the abstracts (see docs/byo-models.md)",
    )
    .action(
      async (
        corpus: string,
        opts: { index: string; format: CorpusFormat; vectors: boolean; config?: string },
        cmd: Command,
      ) => {
        const formats = ["auto", "climatecheck", "scifact", "climate-fever"];
        if (!formats.includes(opts.format)) cmd.error(`--format must be one of ${formats.join(", ")}`);
        const retrieval = await readRetrievalConfig(opts.config);
        const byo = retrieval.backend === "onnx" ? await openByoRetrieval(retrieval, true) : undefined;
        const enc = opts.vectors
          ? await openEncoders({ workers: 2 }).catch(async (e) => {
              await byo?.close();
              throw e;
            })
          : undefined;
        await replaceBuiltin(opts.index, corpus);
        const started = Date.now();
        const progress = ingestReporter("ingest", await countLines(corpus));
        const skips: string[] = [];
        try {
          const r = await ingest(corpus, opts.index, {
            format: opts.format,
            vectors: [...(enc?.specs ?? []), ...(byo?.specs ?? [])],
            onSkip: (line, reason) => skips.push(`line ${line}: ${reason}`),
            onProgress: (p) => progress.update(p.line, p.added),
          });
          progress.stop();
          for (const s of skips.slice(0, 20)) process.stderr.write(`skipped ${corpus} ${s}\n`);
          if (skips.length > 20) process.stderr.write(`... and ${skips.length - 20} more skipped rows\n`);
          process.stderr.write(
            `${r.resumed ? "resumed" : "built"} ${r.dir}: ${r.added} added, ${r.alreadyIndexed} already indexed, ${r.skipped} skipped, ${r.total} abstracts in the index (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
          );
        } finally {
          progress.stop();
          await enc?.close();
          await byo?.close();
        }
      },
    );
}

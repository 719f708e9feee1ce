/** `climatecheck ingest CORPUS`: builds or extends (resumably) the retrieval index. */
import cliProgress from "cli-progress";
import type { Command } from "commander";
import type { CorpusFormat } from "../../data/climatecheck.ts";
import { countLines } from "../../index/count-lines.ts";
import { ingest } from "../../index/ingest.ts";
import { defaultIndexDir } from "../../pipeline/default-index.ts";
import { openEncoders } from "../../retrieval/encoders.ts";

export function register(program: Command): void {
  program
    .command("ingest")
    .description("Index a corpus (BM25 over title and abstract, dense vectors); resumes an interrupted run")
    .argument("<corpus>", "corpus file (.parquet, .jsonl, .csv, optionally .gz)")
    .option(
      "--index <dir>",
      "index directory (default: the default index that check, serve and predict use)",
      defaultIndexDir(),
    )
    .option("--format <format>", "auto | climatecheck | scifact | climate-fever", "auto")
    .option("--no-vectors", "BM25 only (fast; retrieval is then lexical)")
    .action(async (corpus: string, opts: { index: string; format: CorpusFormat; vectors: boolean }) => {
      const formats = ["auto", "climatecheck", "scifact", "climate-fever"];
      if (!formats.includes(opts.format)) program.error(`--format must be one of ${formats.join(", ")}`);
      const enc = opts.vectors ? await openEncoders({ workers: 2 }) : undefined;
      const tty = process.stderr.isTTY === true;
      const total = tty ? await countLines(corpus) : undefined;
      const bar = tty
        ? new cliProgress.SingleBar(
            {
              format:
                "ingest |{bar}| {percentage}% line {value}/{total} · {added} added · {rate}/s · ETA {eta_formatted}",
              stream: process.stderr,
              etaBuffer: 200,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined;
      const started = Date.now();
      bar?.start(total ?? 0, 0, { added: 0, rate: "0" });
      const skips: string[] = [];
      try {
        const r = await ingest(corpus, opts.index, {
          format: opts.format,
          vectors: enc?.specs ?? [],
          onSkip: (line, reason) => skips.push(`line ${line}: ${reason}`),
          onProgress: (p) => {
            const rate = (p.added / Math.max((Date.now() - started) / 1000, 1e-3)).toFixed(0);
            bar?.update(p.line, { added: p.added, rate });
          },
        });
        bar?.stop();
        for (const s of skips.slice(0, 20)) process.stderr.write(`skipped ${corpus} ${s}\n`);
        if (skips.length > 20) process.stderr.write(`... and ${skips.length - 20} more skipped rows\n`);
        process.stderr.write(
          `${r.resumed ? "resumed" : "built"} ${r.dir}: ${r.added} added, ${r.alreadyIndexed} already indexed, ${r.skipped} skipped, ${r.total} abstracts in the index (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
        );
      } finally {
        bar?.stop();
        await enc?.close();
      }
    });
}

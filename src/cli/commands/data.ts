/** `climatecheck data pull`: the official ClimateCheck 2026 claims and corpus from the dataset hub. */
import { join } from "node:path";
import type { Command } from "commander";
import { readClaims, readCorpus } from "../../data/climatecheck.ts";
import { homeDir } from "../../data/paths.ts";
import { DATASETS, HUB_BASE_URL, HUB_REVISION, PullError, pullData } from "../../data/pull.ts";
import { downloadProgress } from "../download-progress.ts";

export const defaultDataDir = (): string => join(homeDir(), "data");

/** Opens each pulled file the way the pipeline will: corpus files with readCorpus, claims with readClaims. */
export async function checkPulled(dir: string, files: string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const local of files) {
    const path = join(dir, local);
    if (local.startsWith("corpus/")) {
      let n = 0;
      for await (const _ of readCorpus(path)) if (++n >= 3) break;
      lines.push(`${local}: corpus opens (first abstracts read)`);
    } else {
      lines.push(`${local}: ${(await readClaims(path)).length} claims`);
    }
  }
  return lines;
}

export function register(program: Command): void {
  const data = program.command("data").description("Data sets of the shared task");
  data
    .command("pull")
    .description(
      `Download the ClimateCheck 2026 claims and publications corpus (${DATASETS.map((d) => d.repo).join(", ")}); resumable, checksummed`,
    )
    .option("--dir <dir>", "folder to download into", defaultDataDir())
    .option("--base-url <url>", "dataset hub", HUB_BASE_URL)
    .option("--revision <rev>", "dataset revision (branch, tag or commit)", HUB_REVISION)
    .action(async (opts: { dir: string; baseUrl: string; revision: string }) => {
      const progress = downloadProgress();
      try {
        const r = await pullData({
          dir: opts.dir,
          baseUrl: opts.baseUrl,
          revision: opts.revision,
          onProgress: progress.onProgress,
          onFile: progress.onFile,
        });
        for (const line of await checkPulled(opts.dir, [...r.present, ...r.downloaded]))
          process.stderr.write(`${line}\n`);
        process.stderr.write(
          `${r.downloaded.length} downloaded, ${r.present.length} already here; checksums in ${join(opts.dir, "manifest.json")}\n`,
        );
      } catch (e) {
        progress.stop();
        if (!(e instanceof PullError)) throw e;
        process.stderr.write(`climatecheck: ${e.message}\n`);
        process.exitCode = 1;
      }
    });
}

/**
 * Batch speed of the shipped narratives models on new claims: `--fast` (no sentence encoder) and full (USE-lite on
 * two worker threads, no vector cache, so every claim is encoded). The worker pool is started before timing, as
 * in a long batch run; the texts are FLICC test passages and dev texts under 300 characters.
 */
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { openUseLite } from "../src/encoders/sentence-encoder.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../src/narratives/classifier.ts";
import { loadNarrativeData } from "../src/narratives/data.ts";
import { type BenchSection, table } from "./report.ts";

async function timed(run: () => Promise<unknown>): Promise<{ seconds: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await run();
  const c = process.cpuUsage(c0);
  return { seconds: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
}

export async function bench(): Promise<BenchSection> {
  const data = await loadNarrativeData();
  const texts = [
    ...data.fliccTest.map((e) => e.text),
    ...data.dev.map((e) => e.text).filter((t) => t.length < 300),
  ];
  const warm = texts.slice(0, 64);
  const timedTexts = texts.slice(64, 664);
  const load = loadavg()[0];

  const fast = new NarrativeClassifier(await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FAST_MODEL_FILE)));
  await fast.classify(warm);
  let fastRuns = 0;
  const fastTime = await timed(async () => {
    const started = performance.now();
    do {
      await fast.classify(timedTexts);
      fastRuns++;
    } while (performance.now() - started < 3000);
  });

  const encoder = await openUseLite({ cacheDir: false, workers: 2 });
  let full: { seconds: number; cpu: number };
  try {
    const classifier = new NarrativeClassifier(
      await readNarrativeModel(join(NARRATIVES_MODEL_DIR, FULL_MODEL_FILE)),
      encoder,
    );
    await classifier.classify(warm); // 64 uncached texts: starts both workers and loads their models
    full = await timed(() => classifier.classify(timedTexts));
  } finally {
    await encoder.close();
  }
  const n = timedTexts.length;
  const meanChars = timedTexts.reduce((s, t) => s + t.length, 0) / n;
  return {
    id: "narratives-speed",
    title: "Narratives: batch speed on new claims (supersedes the speed table of the section above)",
    command: "npm run bench -- narratives-speed",
    markdown: `${n} texts (mean ${meanChars.toFixed(0)} characters), ${cpus().length} cores, load average ${load.toFixed(1)} at the start (other jobs on the machine count against the figures). Full model: USE-lite with 2 worker threads started before timing, vector cache off. Main-thread CPU excludes the workers.\n\n${table(
      ["mode", "claims/s", "claims per CPU-second (one thread; load-independent)", "target"],
      [
        [
          "--fast (no sentence encoder)",
          Math.round((n * fastRuns) / fastTime.seconds),
          Math.round((n * fastRuns) / fastTime.cpu),
          "≥ 2,000",
        ],
        ["full (every feature)", n / full.seconds, "- (the encoder runs in worker threads)", "≥ 60"],
      ],
    )}`,
  };
}

import { loadavg } from "node:os";

/** Shared shape of a benchmark section; bench/run.ts merges sections into BENCHMARKS.md by id. */
export interface BenchSection {
  /** Stable id, e.g. "parquet-memory"; `npm run bench -- ID` reruns only that section. */
  id: string;
  title: string;
  /** The one command that reproduces the figures of this section. */
  command: string;
  /** Body in Markdown (tables of figures). */
  markdown: string;
}

export type Bench = () => Promise<BenchSection>;

/** A Markdown table from a header and rows. */
export function table(header: string[], rows: (string | number)[][]): string {
  const fmt = (v: string | number) =>
    typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : v;
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(fmt).join(" | ")} |`),
  ].join("\n");
}

/** The 1, 5 and 15 min load averages, e.g. "1.8 / 2.1 / 2.8": other jobs on the machine count against timings. */
export function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(1))
    .join(" / ");
}

/** A difference with its sign, to 3 decimals: "+0.012", "-0.004". */
export const signed = (x: number): string => `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;

/** A difference and its interval: "+0.012 (-0.004 to +0.030)". */
export const signedInterval = (i: { value: number; low: number; high: number }): string =>
  `${signed(i.value)} (${signed(i.low)} to ${signed(i.high)})`;

/** The p-th percentile (0-100) of xs by the nearest-rank rule: the element at floor(p% of n), capped at the last. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

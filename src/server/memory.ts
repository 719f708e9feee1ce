/**
 * Memory figures for /healthz. The JS heap of a busy server is a sawtooth (garbage piles up in old space until a
 * major GC), so the current heap says little about leaks; the heap right after the last major GC is what stays,
 * and a rise in it over time is what a leak looks like.
 */
import { constants, PerformanceObserver } from "node:perf_hooks";

export interface MemoryReport {
  rss_mb: number;
  heap_used_mb: number;
  heap_total_mb: number;
  /** Memory outside the JS heap: array buffers, the WebAssembly heap of the sentence encoder, native buffers. */
  external_mb: number;
  array_buffers_mb: number;
  /** Heap in use just after the last major (mark-compact) GC; null before the first one. */
  heap_after_gc_mb: number | null;
  major_gcs: number;
}

const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
let afterGc: number | null = null;
let majorGcs = 0;
let observer: PerformanceObserver | undefined;

/** Starts watching major GCs (once per process). */
export function watchGc(): void {
  if (observer) return;
  observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as { detail?: { kind?: number } }).detail?.kind;
      if (kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      majorGcs++;
      // Observers run after the GC, so this is the heap it left (plus what was allocated since, a little).
      afterGc = process.memoryUsage().heapUsed;
    }
  });
  observer.observe({ entryTypes: ["gc"] });
}

export function memoryReport(): MemoryReport {
  const m = process.memoryUsage();
  return {
    rss_mb: mb(m.rss),
    heap_used_mb: mb(m.heapUsed),
    heap_total_mb: mb(m.heapTotal),
    external_mb: mb(m.external),
    array_buffers_mb: mb(m.arrayBuffers),
    heap_after_gc_mb: afterGc === null ? null : mb(afterGc),
    major_gcs: majorGcs,
  };
}

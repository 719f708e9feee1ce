/**
 * A concurrency gate: at most `max` requests do pipeline work at once; the next one is turned away (503) rather
 * than queued, because the work is CPU-bound on one thread and a queue only adds latency until clients time out.
 */
export interface Gate {
  readonly inFlight: number;
  /** A release function, or undefined when the gate is full. */
  tryEnter(): (() => void) | undefined;
}

export function createGate(max: number): Gate {
  let inFlight = 0;
  return {
    get inFlight() {
      return inFlight;
    },
    tryEnter() {
      if (inFlight >= max) return undefined;
      inFlight++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inFlight--;
      };
    },
  };
}

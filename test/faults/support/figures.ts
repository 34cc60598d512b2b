// What a fault test reports beside its assertions: its figures and where its time went.

/** Milliseconds since the previous lap, by name: where a fault test spent its time. */
export function stopwatch(): { lap(name: string): void; laps: Record<string, number> } {
  let last = Date.now();
  const laps: Record<string, number> = {};
  return {
    laps,
    lap: (name) => {
      const now = Date.now();
      laps[name] = now - last;
      last = now;
    },
  };
}

/** A line for the test output: what a fault did to the numbers. */
export function report(scenario: string, figures: Record<string, unknown>): void {
  process.stdout.write(`\n[faults] ${scenario}: ${JSON.stringify(figures)}\n`);
}

/** How every benchmark prints its verdicts: a measured ratio or figure against its target. */

export interface Target {
  name: string;
  value: number;
  limit: number;
  lowerIsBetter: boolean;
  /** Printed against the target for comparison, but not a verdict (a smaller seed than the target is set on). */
  informational?: boolean;
  pass?: boolean;
}

export function printResults(targets: Target[]): void {
  for (const target of targets) {
    target.pass = target.lowerIsBetter ? target.value <= target.limit : target.value >= target.limit;
    const comparison = target.lowerIsBetter ? "<=" : ">=";
    const verdict = target.informational ? "info" : target.pass ? "PASS" : "FAIL";
    console.log(`  ${verdict}  ${target.name.padEnd(40)} ${target.value.toFixed(2).padStart(9)}  (target ${comparison} ${target.limit})`);
  }
}

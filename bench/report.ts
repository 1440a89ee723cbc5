/** How every benchmark prints its verdicts: a measured ratio or figure against its target. */

export interface Target {
  name: string;
  value: number;
  limit: number;
  lowerIsBetter: boolean;
  pass?: boolean;
}

export function printResults(targets: Target[]): void {
  for (const target of targets) {
    target.pass = target.lowerIsBetter ? target.value <= target.limit : target.value >= target.limit;
    const comparison = target.lowerIsBetter ? "<=" : ">=";
    console.log(`  ${target.pass ? "PASS" : "FAIL"}  ${target.name.padEnd(36)} ${target.value.toFixed(2).padStart(9)}  (target ${comparison} ${target.limit})`);
  }
}

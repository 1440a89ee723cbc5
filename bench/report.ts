/** How every benchmark prints its verdicts: a measured ratio or figure against its target. */

export interface Target {
  name: string;
  value: number;
  limit: number;
  lowerIsBetter: boolean;
  /** The value must equal the limit (a count the formula predicts); `lowerIsBetter` is then ignored. */
  equal?: boolean;
  /** The value is only a lower bound of the figure (events not seen yet): a `<=` target cannot pass on it. */
  lowerBound?: boolean;
  /** Printed against the target for comparison, but not a verdict (a smaller seed than the target is set on). */
  informational?: boolean;
  pass?: boolean;
}

function passes(target: Target): boolean {
  if (target.equal) return target.value === target.limit;
  if (target.lowerIsBetter) return !target.lowerBound && target.value <= target.limit;
  return target.value >= target.limit;
}

export function printResults(targets: Target[]): void {
  for (const target of targets) {
    target.pass = passes(target);
    const comparison = target.equal ? "=" : target.lowerIsBetter ? "<=" : ">=";
    const verdict = target.informational ? "info" : target.pass ? "PASS" : "FAIL";
    const value = Number.isNaN(target.value) ? "n/a" : `${target.lowerBound ? "≥ " : ""}${target.value.toFixed(2)}`;
    console.log(`  ${verdict}  ${target.name.padEnd(50)} ${value.padStart(9)}  (target ${comparison} ${target.limit})`);
  }
}

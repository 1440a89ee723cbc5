import v8 from "node:v8";

/**
 * How far V8 lets the heap grow past what the last full collection kept.
 *
 * A sync's live heap is small and flat (about 30 MB, most of it loaded code),
 * but every page of leads arrives as one string of about half a megabyte,
 * which V8 allocates straight into the old generation. Left to itself, V8
 * lets the old generation grow to four times the live heap before collecting
 * it, so peak memory was mostly garbage waiting for a collection (peak RSS
 * 245 to 265 MB on the `large` benchmark, with 30 MB live). At 100 % the heap
 * grows to twice the live heap: peak RSS 180 to 195 MB, for about 6 % more
 * CPU in the sync (bench/backfill, interleaved runs); 75 % saved no more
 * memory than the run-to-run spread, for more CPU.
 */
export const HEAP_GROWING_PERCENT = 100;

/** Sets the heap's growth for this process, unless it was started with its own `--heap-growing-percent`. */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((flag) => flag.startsWith("--heap-growing-percent"))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

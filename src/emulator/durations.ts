/** Lengths of time in milliseconds, the unit of the emulator's simulated clock. */
export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/**
 * Date-times as the tests compare them: the instant an ISO 8601 text denotes, in microseconds since the
 * epoch, so that two events of one millisecond (`….123456Z`, `….123789Z`) stay apart and the forms
 * drift may send (`+02:00`, a space for `T`, `.123000`) compare equal to the clean rendering.
 *
 * Written here on purpose rather than taken from src/upstream/instant.ts (parseInstant): the emulator's
 * tests judge what the emulator serves, and a parser shared with the sync could hide a mistake both make.
 */

const ISO = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

export function instantMicros(text: string): number {
  const match = ISO.exec(text);
  if (!match) throw new Error(`not an ISO 8601 date-time: ${text}`);
  const [, date, time, fraction = "", zone] = match;
  const digits = fraction.padEnd(6, "0");
  const millis = Date.parse(`${date}T${time}.${digits.slice(0, 3)}${zone === "Z" ? "Z" : zone}`);
  if (Number.isNaN(millis)) throw new Error(`not a valid date-time: ${text}`);
  return millis * 1000 + Number(digits.slice(3, 6));
}

/** Whether the values never decrease, naming the first place they do. */
export function firstDecrease(values: readonly number[]): number | undefined {
  for (let index = 1; index < values.length; index++) if ((values[index] as number) < (values[index - 1] as number)) return index;
  return undefined;
}

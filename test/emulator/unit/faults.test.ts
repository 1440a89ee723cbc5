import { describe, expect, it } from "vitest";
import { FaultInjector, type FaultKind, type FaultScope } from "../../../src/emulator/faults.ts";
import type { FaultMode } from "../../../src/emulator/options.ts";
import { Random, hash32 } from "../../../src/emulator/random.ts";

/** The fault draw: rates per mode, which kinds each kind of request can meet, and one seed, one sequence. */

const DRAWS = 60_000;
const HOSTILE_ONLY: readonly FaultKind[] = ["delete", "empty-page", "sub-millisecond"];

function tally(mode: FaultMode, scope: FaultScope, seed = 3): Map<FaultKind | "none", number> {
  const injector = new FaultInjector(seed);
  const counts = new Map<FaultKind | "none", number>();
  for (let draw = 0; draw < DRAWS; draw++) {
    const kind = injector.draw(mode, scope) ?? "none";
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

const share = (counts: Map<FaultKind | "none", number>, kinds: readonly (FaultKind | "none")[]) =>
  kinds.reduce((sum, kind) => sum + (counts.get(kind) ?? 0), 0) / DRAWS;

describe("FaultInjector", () => {
  it("mild and hostile keep their rates of the request-level kinds, on any request", () => {
    expect(share(tally("mild", "request"), ["none"])).toBeCloseTo(0.97, 2);
    expect(share(tally("hostile", "request"), ["none"])).toBeCloseTo(0.8, 2);
  });

  it("only hostile listings meet delete and empty-page, only hostile event listings sub-millisecond, about 2.7% to 4% each", () => {
    expect(share(tally("mild", "event-listing"), HOSTILE_ONLY)).toBe(0);
    expect(share(tally("hostile", "request"), HOSTILE_ONLY)).toBe(0);
    const listing = tally("hostile", "listing");
    expect(listing.get("sub-millisecond")).toBeUndefined();
    for (const kind of ["delete", "empty-page"] as const) expect(share(listing, [kind])).toBeCloseTo(0.04, 2);
    const events = tally("hostile", "event-listing");
    for (const kind of HOSTILE_ONLY) expect(share(events, [kind])).toBeCloseTo(0.8 * 0.1 / 3, 2);
  });

  it("the hostile-only kinds come on top: the other kinds keep the rate and the very sequence they had before", () => {
    const injector = new FaultInjector(8);
    // The draw as it was before the hostile-only kinds: the main stream, a 20% chance, then one of seven.
    const before = new Random(hash32(8, 0xfa_017));
    const listingKinds: FaultKind[] = ["server-error", "bad-gateway", "unavailable", "throttle", "slow", "drop", "insert"];
    for (let draw = 0; draw < 5_000; draw++) {
      const kind = injector.draw("hostile", "event-listing");
      const expected = before.chance(0.2) ? before.pick(listingKinds) : undefined;
      expect(kind !== undefined && HOSTILE_ONLY.includes(kind) ? undefined : kind).toBe(expected);
    }
    expect(share(tally("hostile", "listing"), listingKinds)).toBeCloseTo(0.2, 2);
  });

  it("asking the same request again right after an empty-page glitch answers normally", () => {
    const injector = new FaultInjector(1);
    expect(injector.mayGlitch("0 /api/v1/leads/?offset=3")).toBe(true);
    expect(injector.mayGlitch("0 /api/v1/leads/?offset=3")).toBe(false);
    expect(injector.mayGlitch("0 /api/v1/leads/?offset=6")).toBe(true);
  });
});

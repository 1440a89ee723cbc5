import { describe, expect, it } from "vitest";
import { Random } from "../../../src/emulator/random.ts";
import { UidCodec } from "../../../src/emulator/store/ids.ts";

describe("Random", () => {
  it("gives the same sequence for the same seed and another for another seed", () => {
    const draw = (seed: number) => {
      const random = new Random(seed);
      return Array.from({ length: 20 }, () => random.next());
    };
    expect(draw(7)).toEqual(draw(7));
    expect(draw(8)).not.toEqual(draw(7));
  });

  it("int stays within its bounds, both included, and reaches both", () => {
    const random = new Random(1);
    const values = new Set(Array.from({ length: 500 }, () => random.int(3, 6)));
    expect([...values].sort()).toEqual([3, 4, 5, 6]);
  });

  it("sample picks distinct items in their original order", () => {
    const random = new Random(2);
    const picked = random.sample([1, 2, 3, 4, 5, 6, 7, 8], 5);
    expect(new Set(picked).size).toBe(5);
    expect(picked).toEqual([...picked].sort((a, b) => a - b));
  });
});

describe("UidCodec", () => {
  const codec = new UidCodec(42);

  it("decodes what it encodes, for every kind", () => {
    for (const serial of [1, 2, 999, 123_456, 2_147_483_647, 4_294_967_295]) {
      for (const kind of ["campaign", "lead", "contactList"] as const) expect(codec.decode(kind, codec.encode(kind, serial))).toBe(serial);
    }
  });

  it("gives distinct, opaque uids with the kind's prefix", () => {
    const uids = Array.from({ length: 10_000 }, (_, index) => codec.encode("lead", index + 1));
    expect(new Set(uids).size).toBe(uids.length);
    expect(uids.every((uid) => /^lead_[0-9a-z]{7}$/.test(uid))).toBe(true);
    expect(uids.slice(0, 5)).not.toEqual([...uids.slice(0, 5)].sort());
  });

  it("refuses uids of another kind or shape", () => {
    const uid = codec.encode("campaign", 5);
    expect(codec.decode("lead", uid)).toBeUndefined();
    for (const bad of ["cmp_", "cmp_zzzzzzzz", "cmp_ABCDEFG", "no-such-uid", `${uid}x`]) expect(codec.decode("campaign", bad)).toBeUndefined();
  });

  it("depends on the seed", () => {
    expect(new UidCodec(43).encode("lead", 1)).not.toBe(codec.encode("lead", 1));
  });

  it("has a long form of exactly 255 characters: the short form, '_' and padding it recognises", () => {
    for (const kind of ["campaign", "lead", "contactList"] as const) {
      for (const serial of [1, 77, 4_294_967_295]) {
        const long = codec.encode(kind, serial, true);
        expect(long).toHaveLength(255);
        expect(long.startsWith(`${codec.encode(kind, serial)}_`)).toBe(true);
        expect(long).toMatch(/^[a-z]+_[0-9a-z]{7}_[0-9a-z]+$/);
        expect(codec.decode(kind, long)).toBe(serial);
        expect(codec.encode(kind, serial, true)).toBe(long);
      }
    }
    expect(codec.encode("lead", 1, true).slice(13)).not.toBe(new UidCodec(43).encode("lead", 1, true).slice(13)); // the padding is keyed too
  });

  it("refuses a long form whose padding or length is not its own", () => {
    const long = codec.encode("campaign", 9, true);
    const other = codec.encode("campaign", 10, true);
    const flipped = `${long.slice(0, 254)}${long.endsWith("a") ? "b" : "a"}`;
    for (const bad of [long.slice(0, 254), `${long}a`, flipped, `${long.slice(0, 12)}${other.slice(12)}`, `${long.slice(0, 11)}-${long.slice(12)}`]) {
      expect(codec.decode("campaign", bad)).toBeUndefined();
    }
  });
});

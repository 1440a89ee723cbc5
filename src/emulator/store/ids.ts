import { hash32 } from "../random.ts";

/**
 * Identifiers. Numeric ids come from one counter per kind, shared by every
 * account, so an id is unique across the whole emulator. Each kind starts at
 * its own base so that a sequence id is never mistaken for a schedule id in a
 * log. uids are the numeric serial passed through a keyed 32-bit Feistel
 * permutation and written in base 36: opaque, unique, and decodable without
 * storing a string per record.
 */

const ID_BASES = {
  workspace: 1_000,
  domain: 5_000,
  contactList: 1,
  campaign: 1,
  sequence: 20_000,
  contact: 1_000_000,
  lead: 1,
  schedule: 10_000_000,
  reply: 400_000_000,
  click: 500_000_000,
  open: 1,
} as const;

type IdKind = keyof typeof ID_BASES;

export class IdCounters {
  private readonly next = new Map<IdKind, number>();

  take(kind: IdKind): number {
    const id = this.next.get(kind) ?? ID_BASES[kind];
    this.next.set(kind, id + 1);
    return id;
  }
}

export const UID_PREFIXES = { campaign: "cmp_", lead: "lead_", contactList: "cl_" } as const;
type UidKind = keyof typeof UID_PREFIXES;

const UID_DIGITS = 7; // 36^7 > 2^32, so every 32-bit value fits.
const FEISTEL_ROUNDS = 4;

export class UidCodec {
  private readonly keys: number[];

  constructor(seed: number) {
    this.keys = Array.from({ length: FEISTEL_ROUNDS }, (_, round) => hash32(seed, round, 0x75_1d));
  }

  encode(kind: UidKind, serial: number): string {
    return UID_PREFIXES[kind] + this.permute(serial).toString(36).padStart(UID_DIGITS, "0");
  }

  /** The serial behind a uid of that kind, or undefined when it cannot be one of ours. */
  decode(kind: UidKind, uid: string): number | undefined {
    const prefix = UID_PREFIXES[kind];
    if (!uid.startsWith(prefix)) return undefined;
    const digits = uid.slice(prefix.length);
    if (digits.length !== UID_DIGITS || !/^[0-9a-z]+$/.test(digits)) return undefined;
    const value = Number.parseInt(digits, 36);
    if (value > 0xffff_ffff) return undefined;
    return this.unpermute(value);
  }

  private round(half: number, round: number): number {
    return hash32(half, this.keys[round] ?? 0) & 0xffff;
  }

  private permute(value: number): number {
    let left = (value >>> 16) & 0xffff;
    let right = value & 0xffff;
    for (let round = 0; round < FEISTEL_ROUNDS; round++) {
      [left, right] = [right, left ^ this.round(right, round)];
    }
    return ((left << 16) | right) >>> 0;
  }

  private unpermute(value: number): number {
    let left = (value >>> 16) & 0xffff;
    let right = value & 0xffff;
    for (let round = FEISTEL_ROUNDS - 1; round >= 0; round--) {
      [left, right] = [right ^ this.round(left, round), left];
    }
    return ((left << 16) | right) >>> 0;
  }
}

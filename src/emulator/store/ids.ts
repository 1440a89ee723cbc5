import { hash32, hashText } from "../random.ts";

/**
 * Identifiers. Numeric ids come from one counter per kind, shared by every
 * account, so an id is unique across the whole emulator. Each kind starts at
 * its own base so that a sequence id is never mistaken for a schedule id in a
 * log. uids are the numeric serial passed through a keyed 32-bit Feistel
 * permutation and written in base 36: opaque, unique, and decodable without
 * storing a string per record. A uid may also take its long form, exactly
 * UID_MAX_LENGTH characters (the spec's maximum): the short form, "_", then
 * padding derived from the short form by a keyed hash, so the codec recognises
 * it and still decodes it without storage. Which records use the long form is
 * the store's decision (World.leadUid, CampaignRecord.uid).
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
/** The longest uid the spec allows (section 8), and the length of every long-form uid. */
export const UID_MAX_LENGTH = 255;
const LONG_SEPARATOR = "_";

export class UidCodec {
  private readonly keys: number[];

  constructor(seed: number) {
    this.keys = Array.from({ length: FEISTEL_ROUNDS }, (_, round) => hash32(seed, round, 0x75_1d));
  }

  /** The uid of a serial: short (prefix and 7 characters), or long (exactly UID_MAX_LENGTH characters). */
  encode(kind: UidKind, serial: number, long = false): string {
    const short = UID_PREFIXES[kind] + this.permute(serial).toString(36).padStart(UID_DIGITS, "0");
    return long ? short + LONG_SEPARATOR + this.padding(short, UID_MAX_LENGTH - short.length - LONG_SEPARATOR.length) : short;
  }

  /**
   * The serial behind a uid of that kind, in either form, or undefined when it cannot be one of ours.
   * Whether the record uses that form is for the caller to check (compare with its canonical uid).
   */
  decode(kind: UidKind, uid: string): number | undefined {
    const prefix = UID_PREFIXES[kind];
    if (!uid.startsWith(prefix)) return undefined;
    const shortLength = prefix.length + UID_DIGITS;
    if (uid.length !== shortLength) {
      if (uid.length !== UID_MAX_LENGTH || uid[shortLength] !== LONG_SEPARATOR) return undefined;
      const short = uid.slice(0, shortLength);
      if (uid.slice(shortLength + 1) !== this.padding(short, UID_MAX_LENGTH - shortLength - 1)) return undefined;
    }
    const digits = uid.slice(prefix.length, shortLength);
    if (!/^[0-9a-z]+$/.test(digits)) return undefined;
    const value = Number.parseInt(digits, 36);
    if (value > 0xffff_ffff) return undefined;
    return this.unpermute(value);
  }

  /** `length` base-36 characters, a keyed hash chain of the short form: opaque, and the same every time. */
  private padding(short: string, length: number): string {
    let state = hash32(this.keys[0] ?? 0, hashText(short));
    let text = "";
    while (text.length < length) {
      state = hash32(state, text.length, 0x1a_6e);
      text += state.toString(36).padStart(7, "0");
    }
    return text.slice(0, length);
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

/**
 * An ordered list of records in creation order (or, for events, event-time
 * order) with a version that changes on every insertion or removal, so that
 * derived views such as a shuffled permutation know when they are stale.
 */
export class Collection<T> {
  private readonly records: T[] = [];
  private revision = 0;

  constructor(
    /** A stable number per record, used to rank it in shuffled listings. */
    readonly rankKey: (record: T) => number,
  ) {}

  get items(): readonly T[] {
    return this.records;
  }

  get length(): number {
    return this.records.length;
  }

  get version(): number {
    return this.revision;
  }

  push(record: T): void {
    this.records.push(record);
    this.revision++;
  }

  insertAt(index: number, record: T): void {
    this.records.splice(index, 0, record);
    this.revision++;
  }

  remove(record: T): boolean {
    const index = this.records.indexOf(record);
    if (index < 0) return false;
    this.records.splice(index, 1);
    this.revision++;
    return true;
  }

  /** Removes every record that matches, in one pass; answers how many went. */
  removeWhere(matches: (record: T) => boolean): number {
    let kept = 0;
    for (const record of this.records) if (!matches(record)) this.records[kept++] = record;
    const removed = this.records.length - kept;
    if (removed > 0) {
      this.records.length = kept;
      this.revision++;
    }
    return removed;
  }

  /** Reorders in place, e.g. generated events by time before they are first served. */
  sortBy(compare: (a: T, b: T) => number): void {
    this.records.sort(compare);
    this.revision++;
  }
}

import type { AdvanceReport, TruthEntity } from "./options.ts";

/**
 * Counts which records a simulation step created or changed. A record is
 * counted once per step, and a record created in the step is not also
 * counted as changed.
 */
export class Tally {
  private readonly createdRecords = new Map<TruthEntity, Set<object>>();
  private readonly changedRecords = new Map<TruthEntity, Set<object>>();

  created(entity: TruthEntity, record: object): void {
    this.setOf(this.createdRecords, entity).add(record);
  }

  changed(entity: TruthEntity, record: object): void {
    this.setOf(this.changedRecords, entity).add(record);
  }

  report(now: string): AdvanceReport {
    const created: AdvanceReport["created"] = {};
    const changed: AdvanceReport["changed"] = {};
    for (const [entity, records] of this.createdRecords) created[entity] = records.size;
    for (const [entity, records] of this.changedRecords) {
      const fresh = this.createdRecords.get(entity);
      const count = fresh ? [...records].filter((record) => !fresh.has(record)).length : records.size;
      if (count > 0) changed[entity] = count;
    }
    return { now, created, changed };
  }

  private setOf(map: Map<TruthEntity, Set<object>>, entity: TruthEntity): Set<object> {
    let records = map.get(entity);
    if (!records) map.set(entity, (records = new Set()));
    return records;
  }
}

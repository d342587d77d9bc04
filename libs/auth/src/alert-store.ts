import { randomUUID } from 'node:crypto';
import { ALERT_LIMITS, type AlertChannel, type AlertChannelKind, type AlertDefinition, type AlertDeliveryKind, type AlertDeliveryStatus, ApiError } from '@analytics/schema';
import type { SqlPort, SqlQueryable } from './sql-port';

/** One alert as stored: its channels with their secrets (never answered whole: libs/schema redactedChannel). */
export interface AlertRecord {
  id: string;
  project_id: string;
  name: string;
  definition: AlertDefinition;
  channels: AlertChannel[];
  state: 'ok' | 'firing';
  state_since: string | null;
  last_evaluated_at: string | null;
  last_value: number | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** One message of an alert to one channel, to send (`message` holds what and where) or sent. */
export interface AlertDeliveryRecord {
  id: string;
  alert_id: string;
  project_id: string;
  channel: AlertChannelKind;
  kind: AlertDeliveryKind;
  status: AlertDeliveryStatus;
  message: Record<string, unknown>;
  attempts: number;
  next_attempt_at: string;
  give_up_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

/** A delivery to queue: sent from `at` on, given up at `giveUpAt`. */
export interface NewAlertDelivery {
  channel: AlertChannelKind;
  kind: AlertDeliveryKind;
  message: Record<string, unknown>;
}

const isUuid = (v: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);
const COLUMNS = 'id, project_id, name, definition, channels, state, state_since, last_evaluated_at, last_value, created_by, created_at, updated_at';
const DELIVERY_COLUMNS = 'id, alert_id, project_id, channel, kind, status, message, attempts, next_attempt_at, give_up_at, last_error, created_at, sent_at';

const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

function toRecord(row: Record<string, unknown>): AlertRecord {
  return {
    id: String(row.id),
    project_id: String(row.project_id),
    name: String(row.name),
    definition: json<AlertDefinition>(row.definition),
    channels: json<AlertChannel[]>(row.channels),
    state: row.state === 'firing' ? 'firing' : 'ok',
    state_since: iso(row.state_since),
    last_evaluated_at: iso(row.last_evaluated_at),
    last_value: row.last_value === null || row.last_value === undefined ? null : Number(row.last_value),
    created_by: row.created_by ? String(row.created_by) : null,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

function toDelivery(row: Record<string, unknown>): AlertDeliveryRecord {
  return {
    id: String(row.id),
    alert_id: String(row.alert_id),
    project_id: String(row.project_id),
    channel: row.channel as AlertChannelKind,
    kind: row.kind as AlertDeliveryKind,
    status: row.status as AlertDeliveryStatus,
    message: json<Record<string, unknown>>(row.message),
    attempts: Number(row.attempts),
    next_attempt_at: iso(row.next_attempt_at)!,
    give_up_at: iso(row.give_up_at)!,
    last_error: row.last_error ? String(row.last_error) : null,
    created_at: iso(row.created_at)!,
    sent_at: iso(row.sent_at),
  };
}

const isUniqueViolation = (e: unknown) => (e as { code?: unknown } | null)?.code === '23505';
const nameTaken = (name: string) => new ApiError('name_taken', { details: { kind: 'alert', name, message: `an alert of this project is already named ${JSON.stringify(name)}` } });

/**
 * The alerts of each project and their deliveries (key store tables `alerts` and `alert_deliveries`, migration 015), on
 * PGlite and PostgreSQL through the SQL port. Every query of the routes is scoped by project; the alerts job reads
 * every project's. Times of the job are its clock's (passed in), not the database's.
 */
export class AlertStore {
  constructor(private readonly db: SqlPort) {}

  async list(projectId: string): Promise<AlertRecord[]> {
    if (!isUuid(projectId)) return [];
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM alerts WHERE project_id = $1 ORDER BY created_at, id`, [projectId]);
    return rows.map(toRecord);
  }

  /** Every alert of every project (the job's round), oldest first. */
  async all(): Promise<AlertRecord[]> {
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM alerts ORDER BY created_at, id`, []);
    return rows.map(toRecord);
  }

  async get(projectId: string, id: string): Promise<AlertRecord | undefined> {
    if (!isUuid(projectId) || !isUuid(id)) return undefined;
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM alerts WHERE project_id = $1 AND id = $2`, [projectId, id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  /** A new alert; undefined when the project does not exist. 409 name_taken, 409 limit_reached at ALERT_LIMITS.perProject. */
  async create(projectId: string, input: { name: string; definition: AlertDefinition; channels: AlertChannel[]; created_by?: string | null }): Promise<AlertRecord | undefined> {
    if (!isUuid(projectId)) return undefined;
    return this.write(async (tx) => {
      const project = await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
      if (!project.rows[0]) return undefined;
      const { rows: counted } = await tx.query<{ n: number | string }>('SELECT count(*) AS n FROM alerts WHERE project_id = $1', [projectId]);
      if (Number(counted[0]?.n ?? 0) >= ALERT_LIMITS.perProject) {
        throw new ApiError('limit_reached', { details: { kind: 'alert', limit: ALERT_LIMITS.perProject, message: `a project holds at most ${ALERT_LIMITS.perProject} alerts: delete one first` } });
      }
      await this.checkName(tx, projectId, input.name);
      const { rows } = await tx.query(
        `INSERT INTO alerts (id, project_id, name, definition, channels, created_by) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6) RETURNING ${COLUMNS}`,
        [randomUUID(), projectId, input.name, JSON.stringify(input.definition), JSON.stringify(input.channels), input.created_by ?? null],
      );
      return toRecord(rows[0]!);
    }, input.name);
  }

  /**
   * Replaces an alert's name, definition and channels; undefined when the project has no such one. A changed
   * definition starts over (state ok, not evaluated): the old state was about another question.
   */
  async update(projectId: string, id: string, next: { name: string; definition: AlertDefinition; channels: AlertChannel[] }): Promise<AlertRecord | undefined> {
    if (!isUuid(projectId) || !isUuid(id)) return undefined;
    return this.write(async (tx) => {
      await this.checkName(tx, projectId, next.name, id);
      const { rows } = await tx.query(
        `UPDATE alerts SET name = $3, channels = $5::jsonb, updated_at = now(),
           state = CASE WHEN definition = $4::jsonb THEN state ELSE 'ok' END,
           state_since = CASE WHEN definition = $4::jsonb THEN state_since ELSE NULL END,
           last_evaluated_at = CASE WHEN definition = $4::jsonb THEN last_evaluated_at ELSE NULL END,
           last_value = CASE WHEN definition = $4::jsonb THEN last_value ELSE NULL END,
           definition = $4::jsonb
         WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
        [projectId, id, next.name, JSON.stringify(next.definition), JSON.stringify(next.channels)],
      );
      return rows[0] ? toRecord(rows[0]) : undefined;
    }, next.name);
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(id)) return false;
    const { rows } = await this.db.query('DELETE FROM alerts WHERE project_id = $1 AND id = $2 RETURNING id', [projectId, id]);
    return rows.length > 0;
  }

  /**
   * Records an evaluation of the window ending at `point`. When `to` differs from the state the alert had (`from`),
   * the state changes and the deliveries are queued (due at `at`, given up at `giveUpAt`) in the same transaction, only
   * if no one changed the state meanwhile: a transition queues its messages once. Answers whether it changed the state.
   */
  async evaluated(
    alert: { id: string; project_id: string },
    change: { from: 'ok' | 'firing'; to: 'ok' | 'firing'; point: Date; value: number },
    deliveries: NewAlertDelivery[],
    at: Date,
    giveUpAt: Date,
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query(
        `UPDATE alerts SET state = $3, state_since = CASE WHEN state = $3 AND state_since IS NOT NULL THEN state_since ELSE $4 END, last_evaluated_at = $4, last_value = $5
          WHERE id = $1 AND state = $2 RETURNING id`,
        [alert.id, change.from, change.to, change.point.toISOString(), change.value],
      );
      if (rows.length === 0 || change.from === change.to) return false;
      await this.insertDeliveries(tx, alert, deliveries, at, giveUpAt);
      return true;
    });
  }

  /** Queues messages outside a transition (a test message); answers them. */
  async enqueue(alert: { id: string; project_id: string }, deliveries: NewAlertDelivery[], at: Date, giveUpAt: Date): Promise<AlertDeliveryRecord[]> {
    return this.db.transaction((tx) => this.insertDeliveries(tx, alert, deliveries, at, giveUpAt));
  }

  /**
   * Takes up to `limit` pending deliveries due at `now` (or the given ids only), each moved to `leaseUntil` so another
   * round does not take it meanwhile (a worker killed mid-send leaves it due again then).
   */
  async claimDue(now: Date, leaseUntil: Date, limit: number, ids?: string[]): Promise<AlertDeliveryRecord[]> {
    const { rows } = await this.db.query(
      `UPDATE alert_deliveries SET next_attempt_at = $2 WHERE id IN (
         SELECT id FROM alert_deliveries WHERE status = 'pending' AND next_attempt_at <= $1 AND ($4::text[] IS NULL OR id = ANY($4::text[]))
          ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING ${DELIVERY_COLUMNS}`,
      [now.toISOString(), leaseUntil.toISOString(), limit, ids ?? null],
    );
    return rows.map(toDelivery);
  }

  /** The outcome of an attempt: sent, failed for good, or pending again from `retryAt`. */
  async settle(id: string, outcome: { status: AlertDeliveryStatus; attempts: number; at: Date; retryAt?: Date; error?: string }): Promise<void> {
    await this.db.query(
      `UPDATE alert_deliveries SET status = $2, attempts = $3, last_error = $4, sent_at = CASE WHEN $2 = 'sent' THEN $5::timestamptz ELSE sent_at END,
         next_attempt_at = COALESCE($6::timestamptz, next_attempt_at) WHERE id = $1`,
      [id, outcome.status, outcome.attempts, outcome.error?.slice(0, 500) ?? null, outcome.at.toISOString(), outcome.retryAt?.toISOString() ?? null],
    );
  }

  /** An alert's deliveries, newest first, at most `limit`. */
  async deliveries(projectId: string, alertId: string, limit: number = ALERT_LIMITS.deliveriesListed): Promise<AlertDeliveryRecord[]> {
    if (!isUuid(projectId) || !isUuid(alertId)) return [];
    const { rows } = await this.db.query(
      `SELECT ${DELIVERY_COLUMNS} FROM alert_deliveries WHERE project_id = $1 AND alert_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
      [projectId, alertId, limit],
    );
    return rows.map(toDelivery);
  }

  private async insertDeliveries(tx: SqlQueryable, alert: { id: string; project_id: string }, deliveries: NewAlertDelivery[], at: Date, giveUpAt: Date): Promise<AlertDeliveryRecord[]> {
    const out: AlertDeliveryRecord[] = [];
    for (const d of deliveries) {
      const { rows } = await tx.query(
        `INSERT INTO alert_deliveries (id, alert_id, project_id, channel, kind, status, message, next_attempt_at, give_up_at, created_at)
         VALUES ($1, $2, $3, $4, $5, 'pending', $6::jsonb, $7, $8, $7) RETURNING ${DELIVERY_COLUMNS}`,
        [randomUUID(), alert.id, alert.project_id, d.channel, d.kind, JSON.stringify(d.message), at.toISOString(), giveUpAt.toISOString()],
      );
      out.push(toDelivery(rows[0]!));
    }
    return out;
  }

  private async checkName(tx: SqlQueryable, projectId: string, name: string, exceptId?: string): Promise<void> {
    const { rows } = await tx.query('SELECT id FROM alerts WHERE project_id = $1 AND name = $2', [projectId, name]);
    if (rows.some((r) => String(r.id) !== exceptId)) throw nameTaken(name);
  }

  private async write<T>(fn: (tx: SqlQueryable) => Promise<T>, name: string): Promise<T> {
    try {
      return await this.db.transaction(fn);
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(name);
      throw e;
    }
  }
}

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ApiError, REPORT_LIMITS, type ReportFrequency } from '@analytics/schema';
import type { SqlPort, SqlQueryable } from './sql-port';

/** A report as stored, with its recipients (oldest first) and when a scheduled send last went out. */
export interface ReportRecord {
  id: string;
  project_id: string;
  frequency: ReportFrequency;
  recipients: string[];
  segment: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  /** The first scheduled send owed is the first at or after this (creation, or the last change of frequency). */
  schedule_from: string;
  last_sent_at: string | null;
}

/** A report as the scheduler reads it: its project's time zone and name, each recipient with when it was added. */
export interface DueReportRecord extends Omit<ReportRecord, 'recipients'> {
  project: { id: string; name: string; timezone: string };
  recipients: Array<{ email: string; added_at: string }>;
}

/** What an unsubscribe link stands for. */
export interface UnsubscribeTarget {
  report_id: string;
  project_id: string;
  project_name: string;
  frequency: ReportFrequency;
  email: string;
  /** Whether the address still receives the report. */
  subscribed: boolean;
}

const isUuid = (v: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);
const iso = (v: unknown) => new Date(v as string).toISOString();
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
/** An unsubscribe token: 32 random bytes, base64url (43 characters). */
const TOKEN_FORM = /^[A-Za-z0-9_-]{43}$/;

const COLUMNS = `r.id, r.project_id, r.frequency, r.segment, r.created_by, r.created_at, r.updated_at, r.schedule_from,
  (SELECT max(s.sent_at) FROM report_sends s WHERE s.report_id = r.id) AS last_sent_at`;

function toRecord(row: Record<string, unknown>, recipients: string[]): ReportRecord {
  return {
    id: String(row.id),
    project_id: String(row.project_id),
    frequency: row.frequency as ReportFrequency,
    recipients,
    segment: row.segment ? String(row.segment) : null,
    created_by: row.created_by ? String(row.created_by) : null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    schedule_from: iso(row.schedule_from),
    last_sent_at: row.last_sent_at ? iso(row.last_sent_at) : null,
  };
}

/** A send's key in ReportStore.sentSince's set. */
export const sendKey = (reportId: string, recipient: string, period: string) => `${reportId} ${recipient} ${period}`;

/** The outcome of claiming one send: `send` with its Message-ID (a retry keeps the first's), or `skip`. */
export type SendClaim = { send: true; messageId: string; attempt: number } | { send: false; reason: 'sent' | 'claimed' };

/**
 * Scheduled email reports (key store tables of migration 014), on PGlite and PostgreSQL through the SQL port. The
 * admin routes' reads and writes are scoped by project; the scheduler reads every project's (`all`), and claims each
 * send in the send log before it mails (`claim`, `markSent`): once per report, recipient and period, whichever
 * replica runs it.
 */
export class ReportStore {
  constructor(private readonly db: SqlPort) {}

  async list(projectId: string): Promise<ReportRecord[]> {
    if (!isUuid(projectId)) return [];
    const { rows } = await this.db.query(`SELECT ${COLUMNS} FROM reports r WHERE r.project_id = $1 ORDER BY r.created_at, r.id`, [projectId]);
    const recipients = await this.recipientsOf(this.db, rows.map((r) => String(r.id)));
    return rows.map((r) => toRecord(r, (recipients.get(String(r.id)) ?? []).map((x) => x.email)));
  }

  async get(projectId: string, id: string): Promise<ReportRecord | undefined> {
    if (!isUuid(projectId) || !isUuid(id)) return undefined;
    return this.getIn(this.db, projectId, id);
  }

  /**
   * A new report; undefined when the project does not exist, `409 limit_reached` at REPORT_LIMITS.perProject (the
   * project's row is locked meanwhile: two creations at once cannot both pass).
   */
  async create(projectId: string, input: { frequency: ReportFrequency; recipients: string[]; segment?: string | null; created_by?: string | null }): Promise<ReportRecord | undefined> {
    if (!isUuid(projectId)) return undefined;
    return this.db.transaction(async (tx) => {
      const project = await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
      if (!project.rows[0]) return undefined;
      const { rows: counted } = await tx.query<{ n: number | string }>('SELECT count(*) AS n FROM reports WHERE project_id = $1', [projectId]);
      if (Number(counted[0]?.n ?? 0) >= REPORT_LIMITS.perProject) {
        throw new ApiError('limit_reached', { details: { limit: REPORT_LIMITS.perProject, message: `a project holds at most ${REPORT_LIMITS.perProject} reports: delete one first` } });
      }
      const id = randomUUID();
      await tx.query('INSERT INTO reports (id, project_id, frequency, segment, created_by) VALUES ($1, $2, $3, $4, $5)', [id, projectId, input.frequency, input.segment ?? null, input.created_by ?? null]);
      await this.setRecipients(tx, id, input.recipients);
      return this.getIn(tx, projectId, id);
    });
  }

  /** Changes a report; undefined when the project has none of that id. A new frequency starts its schedule now. */
  async update(projectId: string, id: string, patch: { frequency?: ReportFrequency; recipients?: string[]; segment?: string | null }): Promise<ReportRecord | undefined> {
    if (!isUuid(projectId) || !isUuid(id)) return undefined;
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query(
        `UPDATE reports SET updated_at = now(),
           schedule_from = CASE WHEN $3::text IS NOT NULL AND $3::text <> frequency THEN now() ELSE schedule_from END,
           frequency = COALESCE($3, frequency),
           segment = CASE WHEN $4 THEN $5 ELSE segment END
         WHERE project_id = $1 AND id = $2 RETURNING id`,
        [projectId, id, patch.frequency ?? null, patch.segment !== undefined, patch.segment ?? null],
      );
      if (!rows[0]) return undefined;
      if (patch.recipients) await this.setRecipients(tx, id, patch.recipients);
      return this.getIn(tx, projectId, id);
    });
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(id)) return false;
    const { rows } = await this.db.query('DELETE FROM reports WHERE project_id = $1 AND id = $2 RETURNING id', [projectId, id]);
    return rows.length > 0;
  }

  /** Every report of every project with at least one recipient, with its project's zone: what the scheduler checks. */
  async all(): Promise<DueReportRecord[]> {
    const { rows } = await this.db.query(
      `SELECT ${COLUMNS}, p.name AS project_name, p.timezone AS project_timezone FROM reports r JOIN projects p ON p.id = r.project_id
        WHERE EXISTS (SELECT 1 FROM report_recipients x WHERE x.report_id = r.id) ORDER BY r.created_at, r.id`,
    );
    const recipients = await this.recipientsOf(this.db, rows.map((r) => String(r.id)));
    return rows.map((r) => {
      const { recipients: _r, ...rest } = toRecord(r, []);
      return {
        ...rest,
        project: { id: String(r.project_id), name: String(r.project_name), timezone: r.project_timezone ? String(r.project_timezone) : 'UTC' },
        recipients: recipients.get(String(r.id)) ?? [],
      };
    });
  }

  /**
   * Claims the send of a report to a recipient for a period, in one transaction: a new claim (a fresh Message-ID), a
   * claim unsent and older than `staleMs` taken over (its worker died; the same Message-ID), or nothing (sent, or a
   * live claim of another worker). The primary key and the row's lock make two replicas' claims of one send exclusive.
   */
  async claim(reportId: string, recipient: string, period: string, staleMs: number, messageIdOf: () => string): Promise<SendClaim> {
    return this.db.transaction(async (tx) => {
      const inserted = await tx.query<{ message_id: string }>(
        `INSERT INTO report_sends (report_id, recipient, period, message_id, claimed_at) VALUES ($1, $2, $3, $4, now())
          ON CONFLICT (report_id, recipient, period) DO NOTHING RETURNING message_id`,
        [reportId, recipient, period, messageIdOf()],
      );
      if (inserted.rows[0]) return { send: true, messageId: inserted.rows[0].message_id, attempt: 1 };
      // One statement: of two workers finding the same stale claim, the second sees the first's new claimed_at.
      const taken = await tx.query<{ message_id: string; attempts: number }>(
        `UPDATE report_sends SET claimed_at = now(), attempts = attempts + 1
          WHERE report_id = $1 AND recipient = $2 AND period = $3 AND sent_at IS NULL
            AND claimed_at < now() - ($4::double precision * interval '1 millisecond')
          RETURNING message_id, attempts`,
        [reportId, recipient, period, staleMs],
      );
      if (taken.rows[0]) return { send: true, messageId: taken.rows[0].message_id, attempt: Number(taken.rows[0].attempts) };
      const { rows } = await tx.query<{ sent_at: unknown }>('SELECT sent_at FROM report_sends WHERE report_id = $1 AND recipient = $2 AND period = $3', [reportId, recipient, period]);
      return { send: false, reason: rows[0]?.sent_at ? 'sent' : 'claimed' };
    });
  }

  /**
   * The sends marked sent whose claim is at or after `sinceMs`, as `report_id recipient period` keys: what a pass skips
   * without a claim of its own (one read per pass instead of a write per recipient).
   */
  async sentSince(sinceMs: number): Promise<Set<string>> {
    const { rows } = await this.db.query<{ report_id: string; recipient: string; period: string }>(
      'SELECT report_id, recipient, period FROM report_sends WHERE sent_at IS NOT NULL AND claimed_at >= $1',
      [new Date(sinceMs).toISOString()],
    );
    return new Set(rows.map((r) => sendKey(r.report_id, r.recipient, r.period)));
  }

  /** Marks a claimed send as accepted by the SMTP server. */
  async markSent(reportId: string, recipient: string, period: string): Promise<void> {
    await this.db.query('UPDATE report_sends SET sent_at = now() WHERE report_id = $1 AND recipient = $2 AND period = $3', [reportId, recipient, period]);
  }

  /** The send log of a report (tests, operators): one row per recipient and period. */
  async sends(reportId: string): Promise<Array<{ recipient: string; period: string; message_id: string; attempts: number; sent: boolean }>> {
    const { rows } = await this.db.query<{ recipient: string; period: string; message_id: string; attempts: number; sent_at: unknown }>(
      'SELECT recipient, period, message_id, attempts, sent_at FROM report_sends WHERE report_id = $1 ORDER BY period, recipient',
      [reportId],
    );
    return rows.map((r) => ({ recipient: r.recipient, period: r.period, message_id: r.message_id, attempts: Number(r.attempts), sent: r.sent_at !== null }));
  }

  /** A new unsubscribe token for one recipient of a report (its hash is stored; the token goes into one mail). */
  async mintUnsubscribeToken(reportId: string, email: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.db.query('INSERT INTO report_unsubscribe_tokens (token_hash, report_id, email) VALUES ($1, $2, $3)', [hashOf(token), reportId, email]);
    return token;
  }

  /** What an unsubscribe token stands for, or undefined (malformed, unknown, its report deleted). */
  async unsubscribeTarget(token: string): Promise<UnsubscribeTarget | undefined> {
    if (!TOKEN_FORM.test(token)) return undefined;
    const { rows } = await this.db.query(
      `SELECT t.report_id, t.email, r.project_id, r.frequency, p.name AS project_name,
              EXISTS (SELECT 1 FROM report_recipients x WHERE x.report_id = t.report_id AND x.email = t.email) AS subscribed
         FROM report_unsubscribe_tokens t JOIN reports r ON r.id = t.report_id JOIN projects p ON p.id = r.project_id
        WHERE t.token_hash = $1`,
      [hashOf(token)],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { report_id: String(row.report_id), project_id: String(row.project_id), project_name: String(row.project_name), frequency: row.frequency as ReportFrequency, email: String(row.email), subscribed: Boolean(row.subscribed) };
  }

  /** Removes the token's recipient from its report (idempotent); undefined for an unknown token. */
  async unsubscribe(token: string): Promise<UnsubscribeTarget | undefined> {
    const target = await this.unsubscribeTarget(token);
    if (!target) return undefined;
    await this.db.query('DELETE FROM report_recipients WHERE report_id = $1 AND email = $2', [target.report_id, target.email]);
    return { ...target, subscribed: false };
  }

  private async getIn(db: SqlQueryable, projectId: string, id: string): Promise<ReportRecord | undefined> {
    const { rows } = await db.query(`SELECT ${COLUMNS} FROM reports r WHERE r.project_id = $1 AND r.id = $2`, [projectId, id]);
    if (!rows[0]) return undefined;
    const recipients = await this.recipientsOf(db, [id]);
    return toRecord(rows[0], (recipients.get(id) ?? []).map((x) => x.email));
  }

  /** Replaces the recipients: those kept keep when they were added (and so the periods they are owed). */
  private async setRecipients(tx: SqlQueryable, reportId: string, emails: string[]): Promise<void> {
    await tx.query('DELETE FROM report_recipients WHERE report_id = $1 AND NOT (email = ANY($2::text[]))', [reportId, emails]);
    for (const email of emails) await tx.query('INSERT INTO report_recipients (report_id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING', [reportId, email]);
  }

  private async recipientsOf(db: SqlQueryable, ids: string[]): Promise<Map<string, Array<{ email: string; added_at: string }>>> {
    const out = new Map<string, Array<{ email: string; added_at: string }>>();
    if (ids.length === 0) return out;
    const { rows } = await db.query<{ report_id: string; email: string; added_at: unknown }>(
      'SELECT report_id, email, added_at FROM report_recipients WHERE report_id = ANY($1::text[]) ORDER BY email',
      [ids],
    );
    for (const r of rows) {
      const list = out.get(r.report_id) ?? [];
      list.push({ email: r.email, added_at: iso(r.added_at) });
      out.set(r.report_id, list);
    }
    return out;
  }
}

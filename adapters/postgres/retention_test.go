package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/ports"
)

// seedRetention writes, for each kind retention deletes, rows that must go
// and rows that must stay.
func seedRetention(t *testing.T, db *pgtest.DB) {
	t.Helper()
	ctx := t.Context()
	for _, sql := range []string{
		`INSERT INTO sessions (id, subject, created_at, expires_at) VALUES
			(repeat('a', 64), 'anon_` + hex32('1') + `', now() - interval '31 days', now() - interval '1 day'),
			(repeat('b', 64), 'anon_` + hex32('2') + `', now() - interval '31 days', now() - interval '1 second'),
			(repeat('c', 64), 'anon_` + hex32('3') + `', now(), now() + interval '30 days')`,
		`INSERT INTO auth_challenges (nonce, message, recipient, created_at, expires_at, used_at) VALUES
			(decode(repeat('01', 32), 'hex'), 'm', 'r', now() - interval '10 minutes', now() - interval '5 minutes', NULL),
			(decode(repeat('02', 32), 'hex'), 'm', 'r', now(), now() + interval '5 minutes', now()),
			(decode(repeat('03', 32), 'hex'), 'm', 'r', now(), now() + interval '5 minutes', NULL)`,
		`INSERT INTO processes (id, hostname, pid, build_id, heartbeat_at) VALUES
			('proc_long_dead', 'h', 1, 'dev', now() - interval '2 hours'),
			('proc_lapsed', 'h', 2, 'dev', now() - interval '5 minutes'),
			('proc_live', 'h', 3, 'dev', now())`,
		`INSERT INTO exploration_idempotency (caller, key, fingerprint, created_at) VALUES
			('anon_x', 'old', 'f', now() - interval '25 hours'),
			('anon_x', 'new', 'f', now() - interval '1 hour')`,
		// Runs: anonymous (NULL or anon_ owner) and a person's, old and new,
		// opened lately or not, ended or running.
		`INSERT INTO runs (id, owner, status, model, updated_at, opened_at) VALUES
			('run_anon_old', 'anon_` + hex32('4') + `', 'done', 'm', now() - interval '100 days', now() - interval '100 days'),
			('run_open_old', NULL, 'interrupted', 'm', now() - interval '100 days', now() - interval '100 days'),
			('run_anon_opened', 'anon_` + hex32('5') + `', 'done', 'm', now() - interval '100 days', now() - interval '100 days'),
			('run_anon_recent', 'anon_` + hex32('6') + `', 'done', 'm', now() - interval '10 days', now() - interval '100 days'),
			('run_anon_running', 'anon_` + hex32('7') + `', 'running', 'm', now() - interval '100 days', now() - interval '100 days'),
			('run_person_old', 'prs_` + hex32('8') + `', 'done', 'm', now() - interval '100 days', now() - interval '100 days')`,
		`INSERT INTO run_events (run_id, seq, kind, data) SELECT 'run_anon_old', i, 'message', '{}' FROM generate_series(0, 99) AS i`,
		`INSERT INTO explorations (id, owner, question, created_at, updated_at, opened_at) VALUES
			('exp_anon_old', 'anon_` + hex32('4') + `', 'q', now() - interval '100 days', now() - interval '100 days', now() - interval '100 days'),
			('exp_doorless_old', '', 'q', now() - interval '100 days', now() - interval '100 days', now() - interval '100 days'),
			('exp_anon_opened', '', 'q', now() - interval '100 days', now() - interval '100 days', now() - interval '100 days'),
			('exp_person_old', 'prs_` + hex32('8') + `', 'q', now() - interval '100 days', now() - interval '100 days', now() - interval '100 days')`,
		`INSERT INTO exploration_notes (id, exploration, text, created_at) VALUES ('note_1', 'exp_anon_old', 'n', now() - interval '100 days')`,
		// NEAR Intents top-ups: only one never paid into, long past its
		// deadline, goes; a paid one is a money record.
		`INSERT INTO people (id) VALUES ('prs_` + hex32('9') + `')`,
		`INSERT INTO intent_topups (deposit_address, person_id, usd_micros, origin_asset, refund_to, amount_in, amount_in_formatted,
			amount_in_usd, amount_out, amount_out_usd, deadline, quote, status, credited_at) VALUES
			('0xunpaid_old', 'prs_` + hex32('9') + `', 1000000, 'a', 'r', '1', '1', '1', '1000000', '1', now() - interval '31 days', '', 'PENDING_DEPOSIT', NULL),
			('0xunpaid_new', 'prs_` + hex32('9') + `', 1000000, 'a', 'r', '1', '1', '1', '1000000', '1', now() - interval '29 days', '', 'PENDING_DEPOSIT', NULL),
			('0xrefunded_old', 'prs_` + hex32('9') + `', 1000000, 'a', 'r', '1', '1', '1', '1000000', '1', now() - interval '100 days', '', 'REFUNDED', NULL),
			('0xpaid_old', 'prs_` + hex32('9') + `', 1000000, 'a', 'r', '1', '1', '1', '1000000', '1', now() - interval '100 days', '', 'SUCCESS', now())`,
		// Profile pictures: one nobody shows for over an hour goes; a new
		// one, and an old one a profile shows, stay.
		`INSERT INTO media (sha256, media_type, bytes, width, height, created_at) VALUES
			(repeat('1', 64), 'image/png', 'x', 1, 1, now() - interval '2 hours'),
			(repeat('2', 64), 'image/png', 'x', 1, 1, now() - interval '10 minutes'),
			(repeat('3', 64), 'image/png', 'x', 1, 1, now() - interval '2 hours')`,
		`INSERT INTO profiles (person_id, body, updated_at) VALUES ('prs_` + hex32('9') + `', '{}', now())`,
		`INSERT INTO profile_media (person_id, slot, sha256) VALUES ('prs_` + hex32('9') + `', 'avatar', repeat('3', 64))`,
		`INSERT INTO chat_quotes (id, thread_sha256, max_micros, payer, expires_at) VALUES
			('quo_` + hex32('1') + `', repeat('a', 64), 1, '', now() - interval '25 hours'),
			('quo_` + hex32('2') + `', repeat('a', 64), 1, '', now() - interval '23 hours')`,
	} {
		_, err := db.Pool.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
}

func hex32(c byte) string {
	b := make([]byte, 32)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

func ids(t *testing.T, db *pgtest.DB, sql string) []string {
	t.Helper()
	rows, err := db.Pool.Query(t.Context(), sql)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestRetentionDeletesWhatIsPastItAndKeepsTheRest(t *testing.T) {
	db := pgtest.New(t)
	seedRetention(t, db)
	ret := postgres.NewRetention(db.DB)
	// Opening a run or an exploration through a door starts its time again.
	_, err := db.Pool.Exec(t.Context(), `UPDATE runs SET opened_at = now() - interval '2 hours' WHERE id = 'run_anon_opened'`)
	require.NoError(t, err)
	require.NoError(t, ret.RunOpened(t.Context(), "run_anon_opened"))
	require.NoError(t, ret.ExplorationOpened(t.Context(), "exp_anon_opened"))
	var opened time.Time
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT opened_at FROM runs WHERE id = 'run_anon_opened'`).Scan(&opened))
	assert.WithinDuration(t, time.Now(), opened, time.Minute)

	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, 90*24*time.Hour, cfg.RetainAnon, "90 days unless told")
	deleted, err := siteapp.RetentionJob(ret, cfg, nil).Run(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 2+2+1+1+2+2+1+1+1, deleted)

	assert.Equal(t, []string{"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"}, ids(t, db, `SELECT id FROM sessions`), "only the unexpired session")
	assert.Equal(t, []string{"03"}, ids(t, db, `SELECT encode(substr(nonce, 1, 1), 'hex') FROM auth_challenges`), "only the unused, unexpired challenge")
	assert.Equal(t, []string{"proc_lapsed", "proc_live"}, ids(t, db, `SELECT id FROM processes ORDER BY id`), "a lease lapsed lately stays for the sweep")
	assert.Equal(t, []string{"new"}, ids(t, db, `SELECT key FROM exploration_idempotency`))
	assert.Equal(t, []string{"run_anon_opened", "run_anon_recent", "run_anon_running", "run_person_old"}, ids(t, db, `SELECT id FROM runs ORDER BY id`))
	assert.Empty(t, ids(t, db, `SELECT run_id FROM run_events`), "a deleted run's events go with it")
	assert.Equal(t, []string{"exp_anon_opened", "exp_person_old"}, ids(t, db, `SELECT id FROM explorations ORDER BY id`))
	assert.Empty(t, ids(t, db, `SELECT id FROM exploration_notes`))
	assert.Len(t, ids(t, db, `SELECT id FROM chat_quotes`), 1, "a quote goes a day after it expired")
	assert.Equal(t, []string{"0xpaid_old", "0xrefunded_old", "0xunpaid_new"}, ids(t, db, `SELECT deposit_address FROM intent_topups ORDER BY 1`))
	assert.Equal(t, []string{"2", "3"}, ids(t, db, `SELECT left(sha256, 1) FROM media ORDER BY 1`), "a picture nobody shows for an hour goes")

	again, err := siteapp.RetentionJob(ret, cfg, nil).Run(t.Context())
	require.NoError(t, err)
	assert.Zero(t, again)
}

func TestRetentionKeepsAnonymousWorkWhenToldTo(t *testing.T) {
	db := pgtest.New(t)
	seedRetention(t, db)
	cfg, err := config.LoadConfig(func(k string) string {
		if k == "PETAL_RETAIN_ANON_DAYS" {
			return "0"
		}
		return ""
	})
	require.NoError(t, err)
	_, err = siteapp.RetentionJob(postgres.NewRetention(db.DB), cfg, nil).Run(t.Context())
	require.NoError(t, err)
	assert.Len(t, ids(t, db, `SELECT id FROM runs`), 6)
	assert.Len(t, ids(t, db, `SELECT id FROM explorations`), 4)
	assert.Len(t, ids(t, db, `SELECT id FROM sessions`), 1, "expired sessions still go")
}

// A batch deletes at most its size, and skips rows another transaction holds
// rather than waiting for them.
func TestRetentionBatchesAndSkipsLockedRows(t *testing.T) {
	db := pgtest.New(t)
	ctx := t.Context()
	_, err := db.Pool.Exec(ctx, `INSERT INTO sessions (id, subject, created_at, expires_at)
SELECT lpad(to_hex(i), 64, '0'), 'anon_' || lpad(to_hex(i), 32, '0'), now() - interval '31 days', now() - interval '1 day'
FROM generate_series(1, 250) AS i`)
	require.NoError(t, err)
	tx, err := db.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	_, err = tx.Exec(ctx, `SELECT id FROM sessions ORDER BY id LIMIT 10 FOR UPDATE`)
	require.NoError(t, err)

	ret := postgres.NewRetention(db.DB)
	var batches []int64
	for {
		n, err := ret.Delete(ctx, ports.ExpiredSessions, 0, 100)
		require.NoError(t, err)
		batches = append(batches, n)
		if n < 100 {
			break
		}
	}
	assert.Equal(t, []int64{100, 100, 40}, batches, "the 10 rows held elsewhere are skipped, not waited for")
	require.NoError(t, tx.Rollback(ctx))
	n, err := ret.Delete(ctx, ports.ExpiredSessions, 0, 100)
	require.NoError(t, err)
	assert.EqualValues(t, 10, n, "and deleted once free")
}

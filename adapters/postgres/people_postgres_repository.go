package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// PeopleRepository keeps persons, wallets, sign-in challenges and a person's
// settings (migrations/000005_people and 000007_pay). Sign-in also moves an
// anonymous session's rows in runs (000008_runs) and explorations
// (000010_explorations).
type PeopleRepository struct{ db *DB }

var _ ports.PeopleStore = (*PeopleRepository)(nil)

// NewPeopleRepository makes the people store over db.
func NewPeopleRepository(db *DB) *PeopleRepository { return &PeopleRepository{db: db} }

// CreateChallenge implements ports.PeopleStore.
func (r *PeopleRepository) CreateChallenge(ctx context.Context, c people.Challenge) error {
	// Expired challenges are swept as new ones come, so the table stays small.
	if _, err := r.db.Pool.Exec(ctx, `DELETE FROM auth_challenges WHERE expires_at < $1::timestamptz - interval '1 hour'`, c.CreatedAt); err != nil {
		return fmt.Errorf("postgres: sweep challenges: %w", err)
	}
	if _, err := r.db.Pool.Exec(ctx, `INSERT INTO auth_challenges (nonce, message, recipient, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		c.Nonce[:], c.Message, c.Recipient, c.CreatedAt, c.ExpiresAt); err != nil {
		return fmt.Errorf("postgres: create challenge: %w", err)
	}
	return nil
}

// Challenge implements ports.PeopleStore.
func (r *PeopleRepository) Challenge(ctx context.Context, nonce [32]byte) (people.Challenge, error) {
	c := people.Challenge{Nonce: nonce}
	err := r.db.Pool.QueryRow(ctx, `SELECT message, recipient, created_at, expires_at, used_at FROM auth_challenges WHERE nonce = $1`, nonce[:]).
		Scan(&c.Message, &c.Recipient, &c.CreatedAt, &c.ExpiresAt, &c.UsedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return people.Challenge{}, errs.New(errs.NotFound, "no such challenge")
	}
	if err != nil {
		return people.Challenge{}, fmt.Errorf("postgres: read challenge: %w", err)
	}
	return c, nil
}

// SignIn implements ports.PeopleStore.
func (r *PeopleRepository) SignIn(ctx context.Context, in ports.SignIn) (ports.SignedIn, error) {
	var out ports.SignedIn
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE auth_challenges SET used_at = $2 WHERE nonce = $1 AND used_at IS NULL AND expires_at > $2`, in.Nonce[:], in.Now)
		if err != nil {
			return fmt.Errorf("postgres: use nonce: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return errs.New(errs.Unauthorised, "this sign-in nonce is unknown, used or expired", "ask for a new challenge")
		}
		personID, walletID, err := bindWallet(ctx, tx, in)
		if err != nil {
			return err
		}
		out.PersonID = personID
		session := in.NewSession
		session.Subject, session.WalletID = personID, walletID
		if in.OldSessionID != "" {
			var subject, invite string
			err := tx.QueryRow(ctx, `SELECT subject, coalesce(invite_id, '') FROM sessions WHERE id = $1 FOR UPDATE`, in.OldSessionID).Scan(&subject, &invite)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("postgres: read the old session: %w", err)
			}
			if err == nil {
				session.InviteID = invite
				if !people.IsPerson(subject) {
					if out.ClaimedRuns, out.ClaimedExplorations, err = moveWork(ctx, tx, subject, personID); err != nil {
						return err
					}
				}
				if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, in.OldSessionID); err != nil {
					return fmt.Errorf("postgres: end the old session: %w", err)
				}
			}
		}
		if _, err := tx.Exec(ctx, sessionInsert, sessionArgs(session)...); err != nil {
			return fmt.Errorf("postgres: open the new session: %w", err)
		}
		out.Session = session
		return nil
	})
	return out, err
}

// AttachWallet implements ports.PeopleStore.
func (r *PeopleRepository) AttachWallet(ctx context.Context, in ports.AttachWallet) (ports.Attached, error) {
	var out ports.Attached
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE auth_challenges SET used_at = $2 WHERE nonce = $1 AND used_at IS NULL AND expires_at > $2`, in.Nonce[:], in.Now)
		if err != nil {
			return fmt.Errorf("postgres: use nonce: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return errs.New(errs.Unauthorised, "this sign-in nonce is unknown, used or expired", "ask for a new challenge")
		}
		w := in.Wallet
		// The unique keyed hash decides between two people attaching one
		// wallet at once: one inserts it, the other finds it bound.
		err = tx.QueryRow(ctx, `INSERT INTO wallets (id, person_id, network, address_hash, address_sealed, proved_at, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (address_hash) DO NOTHING RETURNING id`,
			w.ID, in.PersonID, w.Network, w.AddressHash, w.Sealed, w.ProvedAt).Scan(&out.WalletID)
		if err == nil {
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: attach the wallet: %w", err)
		}
		var owner string
		if err := tx.QueryRow(ctx, `SELECT person_id, id FROM wallets WHERE address_hash = $1 FOR UPDATE`, w.AddressHash).Scan(&owner, &out.WalletID); err != nil {
			return fmt.Errorf("postgres: find the wallet: %w", err)
		}
		if owner != in.PersonID {
			return errs.New(errs.Conflict, "this wallet is already bound to another person",
				"sign in with it to reach that person; wallets are never merged")
		}
		out.Already = true
		if _, err := tx.Exec(ctx, `UPDATE wallets SET proved_at = $2, address_sealed = $3 WHERE id = $1`, out.WalletID, w.ProvedAt, w.Sealed); err != nil {
			return fmt.Errorf("postgres: renew the wallet's proof: %w", err)
		}
		return nil
	})
	if err != nil {
		return ports.Attached{}, err
	}
	return out, nil
}

// bindWallet finds the person a wallet is bound to, or makes both.
func bindWallet(ctx context.Context, tx pgx.Tx, in ports.SignIn) (personID, walletID string, err error) {
	w := in.Wallet
	err = tx.QueryRow(ctx, `UPDATE wallets SET proved_at = $2, address_sealed = $3 WHERE address_hash = $1 RETURNING person_id, id`,
		w.AddressHash, w.ProvedAt, w.Sealed).Scan(&personID, &walletID)
	if err == nil {
		return personID, walletID, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", "", fmt.Errorf("postgres: find the wallet: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO people (id, created_at) VALUES ($1, $2)`, in.NewPersonID, in.Now); err != nil {
		return "", "", fmt.Errorf("postgres: create person: %w", err)
	}
	// Two first sign-ins of one wallet at once: the unique keyed hash lets one
	// bind it; the other finds that binding.
	err = tx.QueryRow(ctx, `INSERT INTO wallets (id, person_id, network, address_hash, address_sealed, proved_at, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (address_hash) DO NOTHING RETURNING id`,
		w.ID, in.NewPersonID, w.Network, w.AddressHash, w.Sealed, w.ProvedAt).Scan(&walletID)
	if err == nil {
		return in.NewPersonID, walletID, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", "", fmt.Errorf("postgres: bind the wallet: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM people WHERE id = $1`, in.NewPersonID); err != nil {
		return "", "", fmt.Errorf("postgres: drop the unused person: %w", err)
	}
	if err := tx.QueryRow(ctx, `SELECT person_id, id FROM wallets WHERE address_hash = $1`, w.AddressHash).Scan(&personID, &walletID); err != nil {
		return "", "", fmt.Errorf("postgres: find the wallet: %w", err)
	}
	return personID, walletID, nil
}

// moveWork gives an anonymous subject's runs and explorations to a person.
func moveWork(ctx context.Context, tx pgx.Tx, from, to string) (runs, explorations int, err error) {
	tag, err := tx.Exec(ctx, `UPDATE runs SET owner = $2 WHERE owner = $1`, from, to)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: move runs: %w", err)
	}
	runs = int(tag.RowsAffected())
	tag, err = tx.Exec(ctx, `UPDATE explorations SET owner = $2 WHERE owner = $1`, from, to)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: move explorations: %w", err)
	}
	return runs, int(tag.RowsAffected()), nil
}

const walletSelect = `SELECT id, person_id, network, address_hash, address_sealed, proved_at FROM wallets `

func scanWallet(row pgx.Row) (ports.SealedWallet, error) {
	var w ports.SealedWallet
	err := row.Scan(&w.ID, &w.PersonID, &w.Network, &w.AddressHash, &w.Sealed, &w.ProvedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.SealedWallet{}, errs.New(errs.NotFound, "no such wallet")
	}
	if err != nil {
		return ports.SealedWallet{}, fmt.Errorf("postgres: read wallet: %w", err)
	}
	w.ProvedAt = w.ProvedAt.UTC()
	return w, nil
}

// Wallets implements ports.PeopleStore.
func (r *PeopleRepository) Wallets(ctx context.Context, personID string) ([]ports.SealedWallet, error) {
	rows, err := r.db.Pool.Query(ctx, walletSelect+`WHERE person_id = $1 ORDER BY created_at, id`, personID)
	if err != nil {
		return nil, fmt.Errorf("postgres: list wallets: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.SealedWallet, error) { return scanWallet(row) })
}

// WalletByHash implements ports.PeopleStore.
func (r *PeopleRepository) WalletByHash(ctx context.Context, hash []byte) (ports.SealedWallet, error) {
	return scanWallet(r.db.Pool.QueryRow(ctx, walletSelect+`WHERE address_hash = $1`, hash))
}

// TipPercent implements ports.PeopleStore.
func (r *PeopleRepository) TipPercent(ctx context.Context, personID string) (*int, error) {
	var tip *int
	err := r.db.Pool.QueryRow(ctx, `SELECT tip_percent FROM person_settings WHERE person_id = $1`, personID).Scan(&tip)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: read tip: %w", err)
	}
	return tip, nil
}

// SetTipPercent implements ports.PeopleStore.
func (r *PeopleRepository) SetTipPercent(ctx context.Context, personID string, percent *int) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO person_settings (person_id, tip_percent, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (person_id) DO UPDATE SET tip_percent = EXCLUDED.tip_percent, updated_at = EXCLUDED.updated_at`, personID, percent, time.Now().UTC())
	if err != nil {
		return fmt.Errorf("postgres: set tip: %w", err)
	}
	return nil
}

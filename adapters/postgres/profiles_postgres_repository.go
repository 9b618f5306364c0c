package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ProfileRepository keeps profiles and their pictures (migrations/000026_profiles).
type ProfileRepository struct{ db *DB }

var _ ports.ProfileStore = (*ProfileRepository)(nil)

// NewProfileRepository makes the profile store over db.
func NewProfileRepository(db *DB) *ProfileRepository { return &ProfileRepository{db: db} }

// KeepProfile implements ports.ProfileStore.
func (r *ProfileRepository) KeepProfile(ctx context.Context, person string, body []byte, pictures []ports.StoredPicture, uses []ports.PictureUse, at time.Time) error {
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		for _, p := range pictures {
			if _, err := tx.Exec(ctx, `INSERT INTO media (sha256, media_type, bytes, width, height, created_at)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (sha256) DO NOTHING`, p.SHA256, p.MediaType, p.Bytes, p.Width, p.Height, at); err != nil {
				return fmt.Errorf("keep picture: %w", err)
			}
		}
		// Every picture the profile shows must be kept, with its type; the
		// lock keeps another profile's replacement from deleting it meanwhile.
		for _, u := range uses {
			var mediaType string
			err := tx.QueryRow(ctx, `SELECT media_type FROM media WHERE sha256 = $1 FOR KEY SHARE`, u.SHA256).Scan(&mediaType)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && mediaType != u.MediaType) {
				return errs.Newf(errs.BadInput, "/profile/%s: no picture with that address is kept here", u.Slot).
					WithHint("send the picture itself as a data:image/png, jpeg or webp base64 URL")
			}
			if err != nil {
				return fmt.Errorf("find picture: %w", err)
			}
		}
		var before []string
		rows, err := tx.Query(ctx, `SELECT sha256 FROM profile_media WHERE person_id = $1`, person)
		if err != nil {
			return fmt.Errorf("read the profile's pictures: %w", err)
		}
		for rows.Next() {
			var sha string
			if err := rows.Scan(&sha); err != nil {
				rows.Close()
				return err
			}
			before = append(before, sha)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO profiles (person_id, body, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (person_id) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at`, person, string(body), at); err != nil {
			return fmt.Errorf("keep profile: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM profile_media WHERE person_id = $1`, person); err != nil {
			return fmt.Errorf("forget the profile's pictures: %w", err)
		}
		for _, u := range uses {
			if _, err := tx.Exec(ctx, `INSERT INTO profile_media (person_id, slot, sha256) VALUES ($1, $2, $3)`, person, u.Slot, u.SHA256); err != nil {
				return fmt.Errorf("note the profile's picture: %w", err)
			}
		}
		// Pictures nobody shows any more go. One another profile started
		// showing meanwhile holds a key-share lock, so it is skipped.
		if len(before) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM media m WHERE m.sha256 = ANY($1)
AND NOT EXISTS (SELECT 1 FROM profile_media u WHERE u.sha256 = m.sha256)
AND m.sha256 IN (SELECT sha256 FROM media WHERE sha256 = ANY($1) FOR UPDATE SKIP LOCKED)`, before); err != nil {
				return fmt.Errorf("delete pictures nobody shows: %w", err)
			}
		}
		return nil
	})
	if e, ok := errs.As(err); ok {
		return e
	}
	if err != nil {
		return fmt.Errorf("postgres: keep profile: %w", err)
	}
	return nil
}

// Profile implements ports.ProfileStore.
func (r *ProfileRepository) Profile(ctx context.Context, person string) (ports.KeptProfile, error) {
	var p ports.KeptProfile
	var body string
	err := r.db.Pool.QueryRow(ctx, `SELECT body, updated_at FROM profiles WHERE person_id = $1`, person).Scan(&body, &p.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.KeptProfile{}, errs.New(errs.NotFound, "no profile kept")
	}
	if err != nil {
		return ports.KeptProfile{}, fmt.Errorf("postgres: read profile: %w", err)
	}
	p.Body = []byte(body)
	return p, nil
}

// Picture implements ports.ProfileStore.
func (r *ProfileRepository) Picture(ctx context.Context, sha256 string) (ports.StoredPicture, error) {
	p := ports.StoredPicture{SHA256: sha256}
	err := r.db.Pool.QueryRow(ctx, `SELECT media_type, bytes, width, height FROM media WHERE sha256 = $1`, sha256).
		Scan(&p.MediaType, &p.Bytes, &p.Width, &p.Height)
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.StoredPicture{}, errs.New(errs.NotFound, "no picture has that name")
	}
	if err != nil {
		return ports.StoredPicture{}, fmt.Errorf("postgres: read picture: %w", err)
	}
	return p, nil
}

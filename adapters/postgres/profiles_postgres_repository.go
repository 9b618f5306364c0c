package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ProfileRepository keeps profiles and their pictures (migrations/000026_profiles),
// the pictures' bytes in the blob store when one is set (KeepingBodiesIn).
type ProfileRepository struct {
	db     *DB
	bodies bodies
}

var _ ports.ProfileStore = (*ProfileRepository)(nil)

// NewProfileRepository makes the profile store over db, pictures' bytes in
// the rows.
func NewProfileRepository(db *DB) *ProfileRepository { return &ProfileRepository{db: db} }

// KeepingBodiesIn has new pictures' bytes written to blobs (nil: the rows),
// keyed by their SHA-256; a row still holding its bytes is read from them.
func (r *ProfileRepository) KeepingBodiesIn(blobs ports.Blobs) *ProfileRepository {
	r.bodies = bodies{blobs: blobs}
	return r
}

// KeepProfile implements ports.ProfileStore. Pictures are kept and locked
// in the order of their names, so two profiles sharing pictures never
// deadlock. Only pictures the profile shows are kept.
func (r *ProfileRepository) KeepProfile(ctx context.Context, person string, body []byte, pictures []ports.StoredPicture, uses []ports.PictureUse, at time.Time) error {
	uses = slices.Clone(uses)
	slices.SortFunc(uses, func(a, b ports.PictureUse) int { return strings.Compare(a.SHA256, b.SHA256) })
	sent := map[string]ports.StoredPicture{}
	for _, p := range pictures {
		sent[p.SHA256] = p
	}
	// Pictures' bytes go to the blob store before the transaction, so no
	// row lock waits on a write to it.
	kept, err := r.bodies.keepPictures(ctx, sent)
	if err != nil {
		return fmt.Errorf("postgres: keep profile: %w", err)
	}
	err = pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		for _, u := range uses {
			if p, ok := sent[u.SHA256]; ok {
				delete(sent, u.SHA256)
				if err := r.bodies.insertPicture(ctx, tx, p, kept[p.SHA256], at); err != nil {
					return fmt.Errorf("keep picture: %w", err)
				}
			}
			// Every picture the profile shows must be kept, with its type;
			// the lock keeps another profile's replacement from deleting it
			// meanwhile.
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
		// The profile's row first: a second write of the same person waits
		// here, then reads what the first one left.
		if _, err := tx.Exec(ctx, `INSERT INTO profiles (person_id, body, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (person_id) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at`, person, string(body), at); err != nil {
			return fmt.Errorf("keep profile: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT sha256 FROM profile_media WHERE person_id = $1`, person)
		if err != nil {
			return fmt.Errorf("read the profile's pictures: %w", err)
		}
		before, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("read the profile's pictures: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM profile_media WHERE person_id = $1`, person); err != nil {
			return fmt.Errorf("forget the profile's pictures: %w", err)
		}
		for _, u := range uses {
			if _, err := tx.Exec(ctx, `INSERT INTO profile_media (person_id, slot, sha256) VALUES ($1, $2, $3)`, person, u.Slot, u.SHA256); err != nil {
				return fmt.Errorf("note the profile's picture: %w", err)
			}
		}
		return deleteUnshown(ctx, tx, before)
	})
	if e, ok := errs.As(err); ok {
		return e
	}
	if err != nil {
		return fmt.Errorf("postgres: keep profile: %w", err)
	}
	return nil
}

// deleteUnshown deletes those of shas that no profile (nor map's mark) shows
// now. A picture
// another profile is starting to show is locked by it, so skipped; one a
// profile started showing just before this statement looked is kept by its
// reference (the savepoint takes the refusal back). What is left over
// (two people dropping one picture at once each leave it to the other) is
// retention's: ports.UnshownPictures.
func deleteUnshown(ctx context.Context, tx pgx.Tx, shas []string) error {
	if len(shas) == 0 {
		return nil
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	_, err = sp.Exec(ctx, `DELETE FROM media m WHERE m.sha256 IN (
    SELECT sha256 FROM media WHERE sha256 = ANY($1) ORDER BY sha256 FOR UPDATE SKIP LOCKED)
AND NOT EXISTS (SELECT 1 FROM profile_media u WHERE u.sha256 = m.sha256)
AND NOT EXISTS (SELECT 1 FROM map_marks k WHERE k.logo_sha256 = m.sha256)`, shas)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // still shown: kept
		return sp.Rollback(ctx)
	}
	if err != nil {
		_ = sp.Rollback(ctx)
		return fmt.Errorf("delete pictures nobody shows: %w", err)
	}
	return sp.Commit(ctx)
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
	var key *string
	err := r.db.Pool.QueryRow(ctx, `SELECT media_type, bytes, bytes_blob, width, height FROM media WHERE sha256 = $1`, sha256).
		Scan(&p.MediaType, &p.Bytes, &key, &p.Width, &p.Height)
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.StoredPicture{}, errs.New(errs.NotFound, "no picture has that name")
	}
	if err != nil {
		return ports.StoredPicture{}, fmt.Errorf("postgres: read picture: %w", err)
	}
	if p.Bytes, err = r.bodies.read(ctx, p.Bytes, key, pictureBlobLimit); err != nil {
		return ports.StoredPicture{}, fmt.Errorf("postgres: read picture %s: %w", sha256, err)
	}
	return p, nil
}

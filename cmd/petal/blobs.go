package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/petal-near/petal/adapters/blobstore"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/ports"
)

// newBlobs is the blob store snapshot bodies and pictures are kept in
// (PETAL_BLOB_URL, decided by config.BlobsFor at start), or nil when they
// stay in PostgreSQL's rows (off, or unset where nothing decided it).
func newBlobs(ctx context.Context, cfg config.Config, log *slog.Logger) (ports.Blobs, func(), error) {
	if cfg.BlobURL == "" || cfg.BlobURL == config.BlobsOff {
		return nil, func() {}, nil
	}
	s, err := blobstore.Open(ctx, cfg.BlobURL)
	if err != nil {
		return nil, nil, err
	}
	// A store that can't be reached fails the start, not the first read.
	if _, err := s.Has(ctx, "0000000000000000000000000000000000000000000000000000000000000000"); err != nil {
		_ = s.Close()
		return nil, nil, fmt.Errorf("PETAL_BLOB_URL: the blob store answers: %w", err)
	}
	log.Info("blobs: snapshot bodies and pictures kept in the blob store", "store", s.Describe())
	return s, func() { _ = s.Close() }, nil
}

// newSnapshotRepository keeps snapshots' bodies in blobs when there is one.
func newSnapshotRepository(db *postgres.DB, blobs ports.Blobs) *postgres.SnapshotRepository {
	return postgres.NewSnapshotRepository(db).KeepingBodiesIn(blobs)
}

// newProfileRepository keeps pictures' bytes in blobs when there is one.
func newProfileRepository(db *postgres.DB, blobs ports.Blobs) *postgres.ProfileRepository {
	return postgres.NewProfileRepository(db).KeepingBodiesIn(blobs)
}

// newMapMarkRepository keeps logos' bytes in blobs when there is one.
func newMapMarkRepository(db *postgres.DB, blobs ports.Blobs) *postgres.MapMarkRepository {
	return postgres.NewMapMarkRepository(db).KeepingBodiesIn(blobs)
}

// newSnapshotLinks sends snapshot bodies' readers to the blob store's signed
// URLs when PETAL_BLOB_REDIRECT is on; a store that signs none refuses the
// start rather than serving every body itself unnoticed.
func newSnapshotLinks(ctx context.Context, cfg config.Config, repo *postgres.SnapshotRepository, blobs ports.Blobs) (ports.SnapshotLinks, error) {
	if !cfg.BlobRedirect {
		return nil, nil
	}
	links, ok := blobs.(ports.BlobLinks)
	if !ok {
		return nil, fmt.Errorf("PETAL_BLOB_REDIRECT is on, and bodies are kept in PostgreSQL (PETAL_BLOB_URL off): there is no store to send readers to")
	}
	if _, err := links.SignedURL(ctx, "0000000000000000000000000000000000000000000000000000000000000000", ports.ServedAs{ContentType: "application/json"}, time.Minute); err != nil {
		return nil, fmt.Errorf("PETAL_BLOB_REDIRECT is on, and the blob store (%s) can't sign a URL that serves a body with its headers (only s3:// does): %w", describe(blobs), err)
	}
	return repo, nil
}

func describe(b ports.Blobs) string {
	if d, ok := b.(interface{ Describe() string }); ok {
		return d.Describe()
	}
	return "?"
}

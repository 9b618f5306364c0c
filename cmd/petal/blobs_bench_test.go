package main

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/blobstore"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// benchBody is a 1 MiB snapshot row (random bytes: a gzip compresses no
// further), its body in the row or in a file:// store.
func benchBody(b *testing.B, n int) ports.StoredSnapshot {
	body := make([]byte, 1<<20)
	_, _ = rand.Read(body)
	return ports.StoredSnapshot{SHA256: fmt.Sprintf("%064x", n), Network: "near-dao-members", TargetKey: fmt.Sprint("t", n),
		Block: snapshots.Block{Height: 1, Hash: "h", Time: "2026-11-01T12:00:00Z"}, Origin: "this_site", Title: "t", About: "a",
		Gzipped: body}
}

// Reading a 1 MiB body past the cache: from its row (the floor, as before
// issue 31) and from a file:// blob store (the default), side by side.
//
//	go test ./cmd/petal -run '^$' -bench BenchmarkSnapshotBodyRead -benchtime 200x
func BenchmarkSnapshotBodyRead(b *testing.B) {
	db := pgtest.New(b)
	store, err := blobstore.Open(b.Context(), "file://"+filepath.ToSlash(b.TempDir())+"?create_dir=true")
	require.NoError(b, err)
	b.Cleanup(func() { _ = store.Close() })
	for _, c := range []struct {
		name  string
		blobs ports.Blobs
		n     int
	}{{"row", nil, 1}, {"file-blob", store, 2}} {
		repo := postgres.NewSnapshotRepository(db.DB).KeepingBodiesIn(c.blobs)
		s := benchBody(b, c.n)
		_, err := repo.Put(b.Context(), s)
		require.NoError(b, err)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s.Gzipped)))
			for b.Loop() {
				if _, err := repo.Get(b.Context(), s.SHA256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The move job's pace: b.N rows of 1 MiB moved from PostgreSQL into a
// file:// store.
//
//	go test ./cmd/petal -run '^$' -bench BenchmarkMoveBodies -benchtime 100x
func BenchmarkMoveBodies(b *testing.B) {
	db := pgtest.New(b)
	old := postgres.NewSnapshotRepository(db.DB)
	for i := range b.N {
		_, err := old.Put(b.Context(), benchBody(b, i+1))
		require.NoError(b, err)
	}
	store, err := blobstore.Open(b.Context(), "file://"+filepath.ToSlash(b.TempDir())+"?create_dir=true")
	require.NoError(b, err)
	b.Cleanup(func() { _ = store.Close() })
	job := siteapp.MoveBodiesJob(postgres.NewBodyMover(db.DB, store), nil)
	b.SetBytes(1 << 20)
	b.ResetTimer()
	moved, err := job.Run(b.Context())
	b.StopTimer()
	require.NoError(b, err)
	require.Equal(b, int64(b.N), moved)
}

package snapshotsapp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"regexp"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// Where a stored snapshot came from.
const (
	OriginThisSite     = "this_site"     // read by this site's own readers
	OriginTheirMachine = "their_machine" // posted by a person's own agent; never read again here
	// OriginDemo is the made-up reading that ships inside petal for demos:
	// it names a real DAO with invented members, so it is never any
	// target's stored reading and every answer about it says demo: true.
	OriginDemo = "demo"
)

// MaxSnapshotInflated bounds a snapshot's canonical bytes (the contract's
// 32 MiB for a posted reading), so a stored body can't inflate without end.
const MaxSnapshotInflated = 32 << 20

var SHA256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// CheckSHA256 refuses anything that isn't a snapshot name, naming field.
func CheckSHA256(field, sha string) error {
	if !SHA256Pattern.MatchString(sha) {
		return errs.Newf(errs.BadInput, "%s must be 64 lower-case hex digits (a SHA-256)", field)
	}
	return nil
}

// LoadSnapshot reads a stored snapshot by name: gunzipped, checked against
// its name, decoded. A body that no longer matches its name is internal,
// never served as if it were the snapshot.
func LoadSnapshot(ctx context.Context, store ports.SnapshotStore, sha string) (snapshots.Snapshot, error) {
	s, _, err := LoadSnapshotCanonical(ctx, store, sha)
	return s, err
}

// LoadSnapshotCanonical is LoadSnapshot with the canonical bytes too. It
// reads and decodes every time; services read through SnapshotLibrary.
func LoadSnapshotCanonical(ctx context.Context, store ports.SnapshotStore, sha string) (snapshots.Snapshot, []byte, error) {
	if err := CheckSHA256("sha256", sha); err != nil {
		return snapshots.Snapshot{}, nil, err
	}
	stored, err := store.Get(ctx, sha)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return snapshots.Snapshot{}, nil, errs.Newf(errs.NotFound, "no snapshot %s is stored here", sha)
		}
		return snapshots.Snapshot{}, nil, err
	}
	return decodeStored(sha, stored.Gzipped)
}

// decodeStored inflates a stored body, checks it against its name and
// decodes it. A body that no longer matches its name is internal, never
// served as if it were the snapshot.
func decodeStored(sha string, gz []byte) (snapshots.Snapshot, []byte, error) {
	canonical, err := Gunzip(gz)
	if err != nil {
		return snapshots.Snapshot{}, nil, errs.New(errs.Internal, "a stored snapshot could not be read").WithCause(err)
	}
	if got := canon.Sum(canonical); got != sha {
		return snapshots.Snapshot{}, nil, errs.New(errs.Internal, "a stored snapshot does not match its name").
			WithCause(fmt.Errorf("snapshot %s hashes to %s", sha, got))
	}
	var s snapshots.Snapshot
	if err := json.Unmarshal(canonical, &s); err != nil {
		return snapshots.Snapshot{}, nil, errs.New(errs.Internal, "a stored snapshot could not be decoded").WithCause(err)
	}
	return s, canonical, nil
}

// StoreSnapshot names, gzips once and stores a snapshot a reader made or a
// person posted. stored is false when it was already there.
func StoreSnapshot(ctx context.Context, store ports.SnapshotStore, s snapshots.Snapshot, origin string) (sha string, stored bool, err error) {
	if problems := snapshots.Validate(s); len(problems) > 0 {
		return "", false, snapshots.Invalid(problems)
	}
	sha, canonical, err := snapshots.Name(s)
	if err != nil {
		return "", false, errs.New(errs.Internal, "the snapshot could not be named").WithCause(err)
	}
	stored, err = StoreCanonical(ctx, store, s, sha, canonical, origin)
	return sha, stored, err
}

// StoreCanonical stores a snapshot whose name and canonical bytes are known
// (from snapshots.Parse for a posted body).
func StoreCanonical(ctx context.Context, store ports.SnapshotStore, s snapshots.Snapshot, sha string, canonical []byte, origin string) (bool, error) {
	if origin != OriginThisSite && origin != OriginTheirMachine && origin != OriginDemo {
		return false, errs.Newf(errs.Internal, "unknown snapshot origin %q", origin)
	}
	target, err := snapshots.TargetKey(s.Network, s.Params)
	if err != nil {
		return false, err
	}
	gz, err := Gzip(canonical)
	if err != nil {
		return false, errs.New(errs.Internal, "the snapshot could not be compressed").WithCause(err)
	}
	stored, err := store.Put(ctx, ports.StoredSnapshot{
		SHA256: sha, Network: s.Network, TargetKey: target, Block: s.Block, Origin: origin,
		Count: len(s.Accounts), Title: s.Title, About: s.About, Gzipped: gz,
	})
	if err != nil {
		return false, errs.New(errs.Internal, "the snapshot could not be stored").WithCause(err)
	}
	return stored, nil
}

// Gzip compresses b once, for storing and serving as is.
func Gzip(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(b)/4 + 64)
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Gunzip inflates a stored body, at most MaxSnapshotInflated bytes, into a
// buffer sized once from the gzip trailer.
func Gunzip(gz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	defer func() { _ = zr.Close() }()
	buf := bytes.NewBuffer(make([]byte, 0, int(min(InflatedLength(gz), MaxSnapshotInflated))+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(zr, MaxSnapshotInflated+1)); err != nil {
		return nil, err
	}
	if buf.Len() > MaxSnapshotInflated {
		return nil, fmt.Errorf("body inflates past %d bytes", MaxSnapshotInflated)
	}
	return buf.Bytes(), nil
}

// InflatedLength is the size a body gzipped by Gzip inflates to, from the
// gzip trailer (ISIZE, exact for one member under 4 GiB, which is what Gzip
// writes); 0 when gz is too short to have one.
func InflatedLength(gz []byte) int64 {
	if len(gz) < 18 {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(gz[len(gz)-4:]))
}

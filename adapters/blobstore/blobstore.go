// Package blobstore is ports.Blobs on go-cloud's blob (gocloud.dev/blob):
// file:// (a folder, the default under .petal/), mem://, s3:// (AWS or any
// S3-compatible server, by the URL's endpoint parameter), and the other
// drivers go-cloud offers, chosen by PETAL_BLOB_URL.
package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file://
	_ "gocloud.dev/blob/memblob"  // mem://
	_ "gocloud.dev/blob/s3blob"   // s3://
	"gocloud.dev/gcerrors"

	"github.com/petal-near/petal/ports"
)

// Store is a bucket of bodies keyed by their SHA-256.
type Store struct {
	bucket *blob.Bucket
	scheme string
}

var (
	_ ports.Blobs     = (*Store)(nil)
	_ ports.BlobLinks = (*Store)(nil)
)

// Open opens the bucket at url (file:///abs/dir?create_dir=true, mem://,
// s3://bucket?region=…&endpoint=…).
func Open(ctx context.Context, rawURL string) (*Store, error) {
	b, err := blob.OpenBucket(ctx, withoutSidecars(rawURL))
	if err != nil {
		return nil, fmt.Errorf("PETAL_BLOB_URL: %w", err)
	}
	scheme := ""
	if u, err := url.Parse(rawURL); err == nil {
		scheme = u.Scheme
	}
	return &Store{bucket: b, scheme: scheme}, nil
}

// Describe names the store for the log without its URL's parameters, which
// may carry credentials.
func (s *Store) Describe() string { return s.scheme + "://" }

// withoutSidecars asks fileblob not to write its ".attrs" side files:
// fileblob writes them in place (os.Create, then the JSON), so a reader that
// meets one mid-write fails to decode it (EOF) and Exists or NewReader
// fails while another replica writes the same key. A body is checked by its
// SHA-256, so the content type and MD5 kept there buy nothing.
func withoutSidecars(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "file" {
		return rawURL
	}
	q := u.Query()
	if q.Get("metadata") == "" {
		q.Set("metadata", "skip")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Close releases the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// objectKey spreads keys over 256 prefixes (ab/abcdef…), so a folder or a
// listing never holds every body at once.
func objectKey(key string) (string, error) {
	if !sha256Hex.MatchString(key) {
		return "", fmt.Errorf("blob key %q is not a lower-case hex SHA-256", key)
	}
	return key[:2] + "/" + key, nil
}

// Put implements ports.Blobs. The key is checked against the bytes before
// anything is written; a key already there is not written again.
func (s *Store) Put(ctx context.Context, key string, body []byte) error {
	name, err := objectKey(key)
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != key {
		return fmt.Errorf("blob key %s is not the SHA-256 of the body (%x)", key, sum)
	}
	if ok, err := s.bucket.Exists(ctx, name); err != nil {
		return err
	} else if ok {
		return nil
	}
	// go-cloud writes to a temporary name (files) or one PUT (S3): a
	// reader never sees half a body, and a writer that dies leaves none.
	return s.bucket.WriteAll(ctx, name, body, &blob.WriterOptions{ContentType: "application/octet-stream"})
}

// Get implements ports.Blobs, reading no more than limit+1 bytes.
func (s *Store) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	name, err := objectKey(key)
	if err != nil {
		return nil, err
	}
	r, err := s.bucket.NewReader(ctx, name, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, ports.ErrNoBlob
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	if r.Size() > limit {
		return nil, fmt.Errorf("blob %s is %d bytes, past the %d allowed", key, r.Size(), limit)
	}
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("blob %s is past the %d bytes allowed", key, limit)
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != key {
		return nil, errors.New("blob " + key + " does not hash to its key: the store changed it")
	}
	return body, nil
}

// Has implements ports.Blobs.
func (s *Store) Has(ctx context.Context, key string) (bool, error) {
	name, err := objectKey(key)
	if err != nil {
		return false, err
	}
	return s.bucket.Exists(ctx, name)
}

// Delete implements ports.Blobs; a key not kept is no error.
func (s *Store) Delete(ctx context.Context, key string) error {
	name, err := objectKey(key)
	if err != nil {
		return err
	}
	if err := s.bucket.Delete(ctx, name); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	return nil
}

// SignedURL implements ports.BlobLinks on S3 (and S3-compatible servers):
// a presigned GET whose response-content-* parameters make S3 serve the
// body with the headers asked. Other stores answer ports.ErrNoLinks: a
// file:// bucket signs nothing without a URLSigner, and a store whose
// headers can't be set this way would serve a body with the wrong ones.
func (s *Store) SignedURL(ctx context.Context, key string, as ports.ServedAs, expiry time.Duration) (string, error) {
	name, err := objectKey(key)
	if err != nil {
		return "", err
	}
	headersSet := false
	link, err := s.bucket.SignedURL(ctx, name, &blob.SignedURLOptions{Expiry: expiry, Method: http.MethodGet,
		BeforeSign: func(as2 func(any) bool) error {
			var in *s3.GetObjectInput
			if !as2(&in) {
				return ports.ErrNoLinks
			}
			in.ResponseContentType = optional(as.ContentType)
			in.ResponseContentEncoding = optional(as.ContentEncoding)
			in.ResponseCacheControl = optional(as.CacheControl)
			headersSet = true
			return nil
		}})
	switch {
	case gcerrors.Code(err) == gcerrors.Unimplemented || errors.Is(err, ports.ErrNoLinks):
		return "", ports.ErrNoLinks
	case err != nil:
		return "", fmt.Errorf("sign a URL for blob %s: %w", key, err)
	case !headersSet:
		return "", ports.ErrNoLinks
	}
	return link, nil
}

func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

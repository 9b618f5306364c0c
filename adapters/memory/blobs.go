package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sync"

	"github.com/petal-near/petal/ports"
)

// Blobs is ports.Blobs in this process's memory, for tests that need a blob
// store to exist (adapters/blobstore is the one petal runs on). Hooks let a
// test make a write fail or stop a process between steps.
type Blobs struct {
	mu   sync.Mutex
	kept map[string][]byte
	// BeforePut, when set, is called before each write; an error refuses it.
	BeforePut func(key string) error
}

var _ ports.Blobs = (*Blobs)(nil)

// NewBlobs makes an empty store.
func NewBlobs() *Blobs { return &Blobs{kept: map[string][]byte{}} }

var blobKey = regexp.MustCompile(`^[0-9a-f]{64}$`)

func checkBlobKey(key string) error {
	if !blobKey.MatchString(key) {
		return fmt.Errorf("blob key %q is not a lower-case hex SHA-256", key)
	}
	return nil
}

// Put implements ports.Blobs.
func (b *Blobs) Put(ctx context.Context, key string, body []byte) error {
	if err := checkBlobKey(key); err != nil {
		return err
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != key {
		return fmt.Errorf("blob key %s is not the SHA-256 of the body", key)
	}
	b.mu.Lock()
	hook := b.BeforePut
	b.mu.Unlock()
	if hook != nil {
		if err := hook(key); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.kept[key]; !ok {
		b.kept[key] = append([]byte(nil), body...)
	}
	return nil
}

// Get implements ports.Blobs.
func (b *Blobs) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	if err := checkBlobKey(key); err != nil {
		return nil, err
	}
	b.mu.Lock()
	body, ok := b.kept[key]
	b.mu.Unlock()
	if !ok {
		return nil, ports.ErrNoBlob
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("blob %s is %d bytes, past the %d allowed", key, len(body), limit)
	}
	return append([]byte(nil), body...), nil
}

// Has implements ports.Blobs.
func (b *Blobs) Has(_ context.Context, key string) (bool, error) {
	if err := checkBlobKey(key); err != nil {
		return false, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.kept[key]
	return ok, nil
}

// Len is how many bodies are kept.
func (b *Blobs) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.kept)
}

// Delete implements ports.Blobs.
func (b *Blobs) Delete(_ context.Context, key string) error {
	if err := checkBlobKey(key); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.kept, key)
	return nil
}

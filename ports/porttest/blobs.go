package porttest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/petal-near/petal/ports"
)

// BlobsContract runs the Blobs contract against the stores newStore makes
// (fresh and empty each time): go-cloud's drivertest is the model, one
// suite for every driver.
func BlobsContract(t *testing.T, newStore func(t *testing.T) ports.Blobs) {
	body := func(s string) ([]byte, string) {
		b := []byte(s)
		sum := sha256.Sum256(b)
		return b, hex.EncodeToString(sum[:])
	}

	t.Run("a body put is read back by its key, and Has says so", func(t *testing.T) {
		s := newStore(t)
		b, key := body("a snapshot body")
		has, err := s.Has(t.Context(), key)
		must(t, err)
		if has {
			t.Fatal("an empty store has the key")
		}
		must(t, s.Put(t.Context(), key, b))
		got, err := s.Get(t.Context(), key, 1<<20)
		must(t, err)
		if string(got) != string(b) {
			t.Fatalf("read %q, kept %q", got, b)
		}
		has, err = s.Has(t.Context(), key)
		must(t, err)
		if !has {
			t.Fatal("Has does not see the body put")
		}
	})

	t.Run("an empty body is a body", func(t *testing.T) {
		s := newStore(t)
		b, key := body("")
		must(t, s.Put(t.Context(), key, b))
		got, err := s.Get(t.Context(), key, 0)
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("read %d bytes", len(got))
		}
	})

	t.Run("a missing key is ErrNoBlob", func(t *testing.T) {
		s := newStore(t)
		_, key := body("never kept")
		if _, err := s.Get(t.Context(), key, 1<<20); !errors.Is(err, ports.ErrNoBlob) {
			t.Fatalf("got %v, want ErrNoBlob", err)
		}
	})

	t.Run("a key that is not the body's SHA-256 is refused and nothing is kept", func(t *testing.T) {
		s := newStore(t)
		b, _ := body("one body")
		_, other := body("another")
		if err := s.Put(t.Context(), other, b); err == nil {
			t.Fatal("a wrong key was taken")
		}
		has, err := s.Has(t.Context(), other)
		must(t, err)
		if has {
			t.Fatal("the refused body was kept")
		}
		for _, bad := range []string{"", "../etc/passwd", "ABCDEF", other[:63], other + "0"} {
			if err := s.Put(t.Context(), bad, b); err == nil {
				t.Fatalf("key %q was taken", bad)
			}
			if _, err := s.Get(t.Context(), bad, 10); err == nil || errors.Is(err, ports.ErrNoBlob) {
				t.Fatalf("key %q was looked up: %v", bad, err)
			}
		}
	})

	t.Run("a body deleted is gone, and deleting it again is no error", func(t *testing.T) {
		s := newStore(t)
		b, key := body("deleted once")
		kept, keptKey := body("kept beside it")
		must(t, s.Put(t.Context(), key, b))
		must(t, s.Put(t.Context(), keptKey, kept))
		must(t, s.Delete(t.Context(), key))
		if _, err := s.Get(t.Context(), key, 1<<20); !errors.Is(err, ports.ErrNoBlob) {
			t.Fatalf("read after delete: %v, want ErrNoBlob", err)
		}
		has, err := s.Has(t.Context(), key)
		must(t, err)
		if has {
			t.Fatal("Has sees a deleted body")
		}
		must(t, s.Delete(t.Context(), key))
		got, err := s.Get(t.Context(), keptKey, 1<<20)
		must(t, err)
		if string(got) != string(kept) {
			t.Fatalf("the other body reads %q", got)
		}
		must(t, s.Put(t.Context(), key, b)) // written again after a delete
		got, err = s.Get(t.Context(), key, 1<<20)
		must(t, err)
		if string(got) != string(b) {
			t.Fatalf("read %q after writing it again", got)
		}
		if err := s.Delete(t.Context(), "../etc/passwd"); err == nil {
			t.Fatal("a key that is no SHA-256 was deleted")
		}
	})

	t.Run("a body past the limit is refused, not cut", func(t *testing.T) {
		s := newStore(t)
		b, key := body("0123456789")
		must(t, s.Put(t.Context(), key, b))
		if got, err := s.Get(t.Context(), key, 9); err == nil {
			t.Fatalf("read %q past a 9-byte limit", got)
		}
		got, err := s.Get(t.Context(), key, 10)
		must(t, err)
		if string(got) != "0123456789" {
			t.Fatalf("read %q", got)
		}
	})

	t.Run("writes are idempotent, also at once from many writers", func(t *testing.T) {
		s := newStore(t)
		b, key := body("written by everyone")
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() { errs <- s.Put(t.Context(), key, b) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			must(t, err)
		}
		must(t, s.Put(t.Context(), key, b))
		got, err := s.Get(t.Context(), key, 1<<20)
		must(t, err)
		if string(got) != string(b) {
			t.Fatalf("read %q", got)
		}
	})

	t.Run("many bodies keep apart", func(t *testing.T) {
		s := newStore(t)
		keys := map[string]string{}
		for i := range 20 {
			b, key := body(fmt.Sprintf("body %d", i))
			must(t, s.Put(t.Context(), key, b))
			keys[key] = string(b)
		}
		for key, want := range keys {
			got, err := s.Get(t.Context(), key, 1<<20)
			must(t, err)
			if string(got) != want {
				t.Fatalf("%s: read %q, want %q", key, got, want)
			}
		}
	})
}

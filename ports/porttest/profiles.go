package porttest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ProfileStoreContract runs the ProfileStore contract against the stores
// newStore makes (a fresh, empty one per call).
func ProfileStoreContract(t *testing.T, newStore func(t *testing.T) ports.ProfileStore) {
	picture := func(n int) ports.StoredPicture {
		return ports.StoredPicture{SHA256: fmt.Sprintf("%064x", n), MediaType: "image/png",
			Bytes: bytes.Repeat([]byte{byte(n)}, 100+n), Width: n, Height: 2 * n}
	}
	use := func(slot string, p ports.StoredPicture) ports.PictureUse {
		return ports.PictureUse{Slot: slot, SHA256: p.SHA256, MediaType: p.MediaType}
	}

	t.Run("a profile kept with its pictures reads back, and its pictures by their names", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		alice := hexID(t, "prs_", 16)
		if _, err := s.Profile(ctx, alice); !errs.Is(err, errs.NotFound) {
			t.Fatalf("before keeping: want not_found, got %v", err)
		}
		avatar, banner := picture(1), picture(2)
		body := []byte(`{"name":"Alice ünï"}`)
		must(t, s.KeepProfile(ctx, alice, body, []ports.StoredPicture{avatar, banner},
			[]ports.PictureUse{use("avatar", avatar), use("banner", banner)}, suiteNow))
		got, err := s.Profile(ctx, alice)
		must(t, err)
		if string(got.Body) != string(body) || !got.UpdatedAt.Equal(suiteNow) {
			t.Fatalf("read back: %s at %v", got.Body, got.UpdatedAt)
		}
		for _, want := range []ports.StoredPicture{avatar, banner} {
			p, err := s.Picture(ctx, want.SHA256)
			must(t, err)
			if !bytes.Equal(p.Bytes, want.Bytes) || p.MediaType != want.MediaType || p.Width != want.Width || p.Height != want.Height {
				t.Fatalf("picture read back: %+v", p)
			}
		}
		if _, err := s.Picture(ctx, picture(3).SHA256); !errs.Is(err, errs.NotFound) {
			t.Fatalf("an unknown picture: want not_found, got %v", err)
		}
	})

	t.Run("a picture is kept while a profile shows it, and goes when none does", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		alice, bob := hexID(t, "prs_", 16), hexID(t, "prs_", 16)
		shared, hers := picture(4), picture(5)
		must(t, s.KeepProfile(ctx, alice, []byte(`{}`), []ports.StoredPicture{shared, hers},
			[]ports.PictureUse{use("avatar", shared), use("banner", hers)}, suiteNow))
		// Bob shows alice's picture by its address: no bytes sent.
		must(t, s.KeepProfile(ctx, bob, []byte(`{}`), nil, []ports.PictureUse{use("avatar", shared)}, suiteNow))
		// Alice clears both.
		must(t, s.KeepProfile(ctx, alice, []byte(`{}`), nil, nil, suiteNow.Add(time.Minute)))
		if _, err := s.Picture(ctx, hers.SHA256); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a picture nobody shows is deleted: %v", err)
		}
		if _, err := s.Picture(ctx, shared.SHA256); err != nil {
			t.Fatalf("a picture bob shows stays: %v", err)
		}
		must(t, s.KeepProfile(ctx, bob, []byte(`{"name":"Bob"}`), nil, nil, suiteNow))
		if _, err := s.Picture(ctx, shared.SHA256); !errs.Is(err, errs.NotFound) {
			t.Fatalf("then it goes too: %v", err)
		}
		// The same picture kept twice is kept once.
		must(t, s.KeepProfile(ctx, alice, []byte(`{}`), []ports.StoredPicture{hers, hers},
			[]ports.PictureUse{use("avatar", hers), use("banner", hers)}, suiteNow))
		if _, err := s.Picture(ctx, hers.SHA256); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("showing a picture that isn't kept is bad_input and changes nothing", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		alice := hexID(t, "prs_", 16)
		kept := picture(6)
		must(t, s.KeepProfile(ctx, alice, []byte(`{"name":"first"}`), []ports.StoredPicture{kept}, []ports.PictureUse{use("avatar", kept)}, suiteNow))
		err := s.KeepProfile(ctx, alice, []byte(`{"name":"second"}`), nil, []ports.PictureUse{use("avatar", picture(7))}, suiteNow.Add(time.Minute))
		if !errs.Is(err, errs.BadInput) {
			t.Fatalf("want bad_input, got %v", err)
		}
		wrongType := use("avatar", kept)
		wrongType.MediaType = "image/webp"
		err = s.KeepProfile(ctx, alice, []byte(`{"name":"second"}`), nil, []ports.PictureUse{wrongType}, suiteNow.Add(time.Minute))
		if !errs.Is(err, errs.BadInput) {
			t.Fatalf("another type: want bad_input, got %v", err)
		}
		got, err := s.Profile(ctx, alice)
		must(t, err)
		if string(got.Body) != `{"name":"first"}` || !got.UpdatedAt.Equal(suiteNow) {
			t.Fatalf("the refused write changed the profile: %s", got.Body)
		}
		if _, err := s.Picture(ctx, kept.SHA256); err != nil {
			t.Fatalf("the refused write deleted the picture: %v", err)
		}
	})

	t.Run("people showing and dropping shared pictures at once never lose one from under a profile", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		a, b := picture(8), picture(9)
		people := make([]string, 8)
		var wg sync.WaitGroup
		for i := range people {
			people[i] = hexID(t, "prs_", 16)
			wg.Go(func() {
				for round := range 6 {
					// Each sends both pictures, in either slot, then drops them.
					first, second := a, b
					if (i+round)%2 == 1 {
						first, second = b, a
					}
					err := s.KeepProfile(ctx, people[i], []byte(`{}`), []ports.StoredPicture{first, second},
						[]ports.PictureUse{use("avatar", first), use("banner", second)}, suiteNow)
					if err != nil {
						t.Errorf("%s shows both: %v", people[i], err)
						return
					}
					for _, p := range []ports.StoredPicture{a, b} {
						if _, err := s.Picture(ctx, p.SHA256); err != nil {
							t.Errorf("a picture %s shows was lost: %v", people[i], err)
						}
					}
					if err := s.KeepProfile(ctx, people[i], []byte(`{}`), nil, nil, suiteNow); err != nil {
						t.Errorf("%s drops both: %v", people[i], err)
						return
					}
				}
			})
		}
		wg.Wait()
		// The last to show it sends it again, and has it.
		must(t, s.KeepProfile(ctx, people[0], []byte(`{}`), []ports.StoredPicture{a}, []ports.PictureUse{use("avatar", a)}, suiteNow))
		if _, err := s.Picture(ctx, a.SHA256); err != nil {
			t.Fatal(err)
		}
	})
}

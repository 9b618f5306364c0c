package peopleapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/profiles"
	"github.com/petal-near/petal/ports"
)

// ProfileWritesPerHour bounds how often one person replaces their profile:
// each write may decode two pictures (what decoding them may take is the
// domain's bound, profiles.MaxPictureDecodeBytes, and a process decodes
// profiles.DecodeBytesAtOnce of pictures at once, from profiles and maps'
// logos alike).
const ProfileWritesPerHour = 60

// ProfileService keeps people's profiles in NEAR Social's shape and the
// pictures they show (docs/people.md): each picture proved a PNG, JPEG or
// WebP by decoding it, its size read from its header before any pixel.
type ProfileService struct {
	store    ports.ProfileStore
	budget   *snapshotsapp.DataBudget
	limiter  ports.RateLimiter
	clock    ports.Clock
	log      *slog.Logger
	kept     ports.Counter
	pictures ports.Counter
}

// NewProfileService makes the profile service over its store.
func NewProfileService(store ports.ProfileStore, budget *snapshotsapp.DataBudget, limiter ports.RateLimiter, clock ports.Clock, log *slog.Logger, metrics ports.Metrics) *ProfileService {
	m := ports.MetricsOrNone(metrics)
	return &ProfileService{store: store, budget: budget, limiter: limiter, clock: clock, log: log,
		kept:     m.Counter("petal_profiles_kept_total", "Profiles people kept (PUT /api/v1/me/profile)."),
		pictures: m.Counter("petal_profile_pictures_total", "Pictures sent in profiles, by outcome: accepted, or refused (not a picture this site keeps).", "outcome"),
	}
}

// ProfileAnswer is GET and PUT /api/v1/me/profile's answer. Profile and
// UpdatedAt are null until the person keeps one; Published stays null until
// publishing to NEAR Social is built.
type ProfileAnswer struct {
	Profile   *profiles.Profile `json:"profile"`
	UpdatedAt *time.Time        `json:"updated_at"`
	Published *struct{}         `json:"published"`
}

// KeepProfileBody is PUT /api/v1/me/profile's body: the whole profile.
type KeepProfileBody struct {
	Profile *profiles.Input `json:"profile"`
}

func signInFirst() *errs.Error {
	return errs.New(errs.Unauthorised, "sign in first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
}

// Mine is GET /api/v1/me/profile: the person's profile, or nulls.
func (s *ProfileService) Mine(ctx context.Context, subject string) (ProfileAnswer, error) {
	if !people.IsPerson(subject) {
		return ProfileAnswer{}, signInFirst()
	}
	kept, err := s.store.Profile(ctx, subject)
	if errs.Is(err, errs.NotFound) {
		return ProfileAnswer{}, nil
	}
	if err != nil {
		return ProfileAnswer{}, errs.New(errs.Internal, "your profile could not be read").WithCause(err)
	}
	var p profiles.Profile
	if err := json.Unmarshal(kept.Body, &p); err != nil {
		return ProfileAnswer{}, errs.New(errs.Internal, "your profile could not be read").WithCause(err)
	}
	at := kept.UpdatedAt.UTC()
	return ProfileAnswer{Profile: &p, UpdatedAt: &at}, nil
}

// Limit takes one of the person's profile writes, before the body is read.
func (s *ProfileService) Limit(ctx context.Context, person string) error {
	if s.limiter == nil {
		return nil
	}
	ok, wait, err := s.limiter.Allow(ctx, "profile:"+person, ProfileWritesPerHour, time.Hour)
	if err != nil {
		return errs.New(errs.Internal, "the rate limiter failed").WithCause(err)
	}
	if !ok {
		return toolkit.RateLimited(fmt.Sprintf("more than %d profile changes an hour", ProfileWritesPerHour), wait)
	}
	return nil
}

// Keep is PUT /api/v1/me/profile: the whole profile replaced, its pictures
// checked and kept. Anything wrong is bad_input with the reason, naming the
// member, and keeps nothing.
func (s *ProfileService) Keep(ctx context.Context, sess people.Session, body KeepProfileBody) (ProfileAnswer, error) {
	if !sess.Signed() {
		return ProfileAnswer{}, signInFirst()
	}
	if body.Profile == nil {
		return ProfileAnswer{}, errs.New(errs.BadInput, "profile is required: the whole of it",
			`send { "profile": { "name": "…" } }; { "profile": {} } clears it`)
	}
	checked, err := s.check(ctx, *body.Profile)
	if err != nil {
		return ProfileAnswer{}, err
	}
	var stored []ports.StoredPicture
	var uses []ports.PictureUse
	size := int64(snapshotsapp.RowBytes)
	for _, ref := range checked.Pictures {
		switch {
		case ref.Data != nil:
			p := ref.Data
			stored = append(stored, ports.StoredPicture{SHA256: p.SHA256, MediaType: p.MediaType, Bytes: p.Bytes, Width: p.Width, Height: p.Height})
			uses = append(uses, ports.PictureUse{Slot: string(ref.Slot), SHA256: p.SHA256, MediaType: p.MediaType})
			size += int64(len(p.Bytes)) + snapshotsapp.RowBytes
		case ref.SHA256 != "":
			uses = append(uses, ports.PictureUse{Slot: string(ref.Slot), SHA256: ref.SHA256, MediaType: ref.MediaType})
		}
	}
	profileJSON, err := json.Marshal(checked.Profile)
	if err != nil {
		return ProfileAnswer{}, err
	}
	size += int64(len(profileJSON))
	// A person's writes aren't counted, but go through the budget like
	// every write, so a change to who is counted reaches them.
	refund, err := s.budget.Spend(ctx, sess.Subject, size)
	if err != nil {
		return ProfileAnswer{}, err
	}
	// PostgreSQL keeps microseconds: PUT answers the time GET will.
	at := s.clock.Now().UTC().Truncate(time.Microsecond)
	if err := s.store.KeepProfile(ctx, sess.Subject, profileJSON, stored, uses, at); err != nil {
		refund()
		if e, ok := errs.As(err); ok && e.Code == errs.BadInput {
			return ProfileAnswer{}, e
		}
		return ProfileAnswer{}, errs.New(errs.Internal, "your profile could not be kept").WithCause(err)
	}
	s.kept.Add(1)
	p := checked.Profile
	return ProfileAnswer{Profile: &p, UpdatedAt: &at}, nil
}

// check checks the input. Its pictures wait for room among the process's
// decodes (profiles.DecodeBytesAtOnce) only as long as the request's context
// lives: a person whose request ended is not left queued behind others.
func (s *ProfileService) check(ctx context.Context, in profiles.Input) (profiles.Checked, error) {
	pictures := 0
	for _, v := range []*string{in.Avatar, in.Banner} {
		if v != nil && profiles.IsDataURL(*v) {
			pictures++
		}
	}
	checked, err := profiles.Check(ctx, in)
	if errors.Is(err, profiles.ErrNoRoomToDecode) {
		return profiles.Checked{}, errs.New(errs.SourceFailed, "the pictures could not be checked in time: this site is busy decoding others", "try again in a moment")
	}
	if err != nil {
		var p *profiles.Problem
		if errors.As(err, &p) {
			if pictures > 0 && (strings.HasSuffix(p.Path, "/avatar") || strings.HasSuffix(p.Path, "/banner")) {
				s.pictures.Add(1, "refused")
			}
			e := errs.Newf(errs.BadInput, "%s: %s", p.Path, p.Message)
			e.Problems = []errs.Problem{{Path: p.Path, Message: p.Message}}
			return profiles.Checked{}, e
		}
		return profiles.Checked{}, errs.New(errs.BadInput, err.Error())
	}
	for _, ref := range checked.Pictures {
		if ref.Data != nil {
			s.pictures.Add(1, "accepted")
		}
	}
	return checked, nil
}

// Picture is GET /api/v1/media/:sha256.:ext: a kept picture, by its name and
// its type's extension; anything else is not_found.
func (s *ProfileService) Picture(ctx context.Context, file string) (ports.StoredPicture, error) {
	notFound := errs.New(errs.NotFound, "no picture has that address", "a picture's address names it by its sha256 and type: <sha256>.<png|jpg|webp|svg>")
	sha, ext, ok := strings.Cut(file, ".")
	if !ok || len(sha) != 64 || profiles.MediaTypeOfExt(ext) == "" || strings.ToLower(sha) != sha {
		return ports.StoredPicture{}, notFound
	}
	p, err := s.store.Picture(ctx, sha)
	if errs.Is(err, errs.NotFound) {
		return ports.StoredPicture{}, notFound
	}
	if err != nil {
		return ports.StoredPicture{}, errs.New(errs.Internal, "the picture could not be read").WithCause(err)
	}
	if profiles.MediaTypeOfExt(ext) != p.MediaType {
		return ports.StoredPicture{}, notFound
	}
	return p, nil
}

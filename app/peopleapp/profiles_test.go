package peopleapp_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"image"
	"image/png"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/profiles"
)

// The profile service's rules over memory.Profiles, which passes the
// profile store's contract suite as PostgreSQL's store does.

type clockAt struct{ t time.Time }

func (c clockAt) Now() time.Time { return c.t }

var at = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func profileService(t *testing.T) (*peopleapp.ProfileService, *memory.Profiles, people.Session) {
	t.Helper()
	store := memory.NewProfiles()
	id, err := people.NewPersonID(rand.Reader)
	require.NoError(t, err)
	s := peopleapp.NewProfileService(store, nil, memory.NewRateLimiter(clockAt{at}), clockAt{at}, nil, nil)
	return s, store, people.Session{ID: "ses_p", Subject: id}
}

func pngDataURL(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))))
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func str(s string) *string { return &s }

// A profile with a picture reads back, and the picture is served by its
// sha256 and its type's extension only; replacing the profile without it
// lets the picture go.
func TestAProfilesPictureIsKeptWhileItIsShown(t *testing.T) {
	s, store, sess := profileService(t)
	ctx := t.Context()
	ans, err := s.Keep(ctx, sess, peopleapp.KeepProfileBody{Profile: &profiles.Input{Name: str("Alice"), Avatar: str(pngDataURL(t, 4, 3))}})
	require.NoError(t, err)
	require.NotNil(t, ans.Profile)
	assert.Equal(t, "Alice", ans.Profile.Name)
	require.NotEmpty(t, ans.Profile.Avatar)
	mine, err := s.Mine(ctx, sess.Subject)
	require.NoError(t, err)
	assert.Equal(t, ans, mine)
	assert.Equal(t, at, *mine.UpdatedAt)

	require.Equal(t, 1, store.Pictures())
	file := ans.Profile.Avatar[len(ans.Profile.Avatar)-len("0000000000000000000000000000000000000000000000000000000000000000.png"):]
	p, err := s.Picture(ctx, file)
	require.NoError(t, err)
	assert.Equal(t, "image/png", p.MediaType)
	assert.Equal(t, [2]int{4, 3}, [2]int{p.Width, p.Height})
	for _, wrong := range []string{file[:64] + ".jpg", file[:64], "nope.png", "X" + file[1:]} {
		_, err := s.Picture(ctx, wrong)
		assert.Equal(t, errs.NotFound, errs.CodeOf(err), "%q: %v", wrong, err)
	}

	_, err = s.Keep(ctx, sess, peopleapp.KeepProfileBody{Profile: &profiles.Input{Name: str("Alice")}})
	require.NoError(t, err)
	assert.Zero(t, store.Pictures(), "a picture no profile shows is not kept")
}

// Refusals: a visitor is unauthorised, a missing profile or a picture that
// is no picture is bad_input naming the member; none changes what is kept.
func TestARefusedProfileChangesNothing(t *testing.T) {
	s, store, sess := profileService(t)
	ctx := t.Context()
	_, err := s.Keep(ctx, sess, peopleapp.KeepProfileBody{Profile: &profiles.Input{Name: str("First")}})
	require.NoError(t, err)
	before, err := s.Mine(ctx, sess.Subject)
	require.NoError(t, err)

	_, err = s.Keep(ctx, people.Session{ID: "ses_anon"}, peopleapp.KeepProfileBody{Profile: &profiles.Input{Name: str("x")}})
	assert.Equal(t, errs.Unauthorised, errs.CodeOf(err), "%v", err)
	_, err = s.Mine(ctx, "visitor")
	assert.Equal(t, errs.Unauthorised, errs.CodeOf(err), "%v", err)

	_, err = s.Keep(ctx, sess, peopleapp.KeepProfileBody{})
	assert.Equal(t, errs.BadInput, errs.CodeOf(err), "%v", err)

	_, err = s.Keep(ctx, sess, peopleapp.KeepProfileBody{Profile: &profiles.Input{Name: str("Second"),
		Avatar: str("data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("not a png at all")))}})
	assert.Equal(t, errs.BadInput, errs.CodeOf(err), "%v", err)
	e, ok := errs.As(err)
	require.True(t, ok)
	require.NotEmpty(t, e.Problems)
	assert.Contains(t, e.Problems[0].Path, "avatar")

	after, err := s.Mine(ctx, sess.Subject)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	assert.Zero(t, store.Pictures())
}

// One person replaces their profile at most ProfileWritesPerHour times an
// hour; the next is rate_limited, and another person is not held by it.
func TestProfileWritesAreLimitedPerPerson(t *testing.T) {
	s, _, sess := profileService(t)
	ctx := t.Context()
	for range peopleapp.ProfileWritesPerHour {
		require.NoError(t, s.Limit(ctx, sess.Subject))
	}
	err := s.Limit(ctx, sess.Subject)
	assert.Equal(t, errs.RateLimited, errs.CodeOf(err), "%v", err)
	assert.NoError(t, s.Limit(ctx, "prs_other"))
}
